import { TestUSDC } from "@c402/evm-contracts";
import { encodeHeader, signExactEvmPayment } from "@c402/x402";
import { createPublicClient, createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { call, decoded, newCheckout, newSeller } from "../src/http";

/**
 * G21 (malformed payment headers never crash or 5xx; 2,000 here, 10,000 with
 * C402_NIGHTLY=1) and G8 (one payment cannot buy twice: the same payment 50×
 * concurrently and 50× serially, under both header names).
 */
describe("robustness of the payment faces", () => {
  it("answers random malformed payment headers with 4xx, never 5xx, and stays healthy (G21)", async () => {
    const s = await newSeller();
    const c = await newCheckout(s.key);
    const valid = encodeHeader(
      await signExactEvmPayment(
        privateKeyToAccount(generatePrivateKey()),
        decoded((await call("GET", `/c/${c.id}/test`)).headers.get("payment-required")).accepts[0],
      ),
    );
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const variants = [
      () => Array.from({ length: rand(300) + 1 }, () => String.fromCharCode(33 + rand(94))).join(""),
      () => valid.slice(0, rand(valid.length)),
      () => {
        const i = rand(valid.length);
        return valid.slice(0, i) + "/" + valid.slice(i + 1);
      },
      () =>
        Buffer.from(JSON.stringify({ x402Version: 2, accepted: { __proto__: { amount: "1" } }, payload: { signature: [], authorization: "x" } })).toString(
          "base64",
        ),
      () => Buffer.from("{".repeat(rand(4000) + 1)).toString("base64"),
      () =>
        Buffer.from(JSON.stringify({ x402Version: 2, payload: { signature: "0x" + "f".repeat(130), authorization: { value: "9".repeat(90) } } })).toString(
          "base64",
        ),
      () => Buffer.from([0xc3, 0x28, 0xa0, 0xa1, rand(256)]).toString("base64"),
    ];
    const total = process.env.C402_NIGHTLY ? 10_000 : 2_000;
    const statuses = new Map<number, number>();
    for (let i = 0; i < total; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, total - i) }, () => {
          const header = (variants[rand(variants.length)] as () => string)();
          return call("GET", `/c/${c.id}/test`, { headers: { [rand(2) ? "PAYMENT-SIGNATURE" : "X-PAYMENT"]: header } }).catch(() => ({ status: 0 }));
        }),
      );
      for (const r of batch) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    }
    for (const status of statuses.keys()) {
      // 200 only when a mutation happened to leave the payment valid.
      expect(status === 200 || (status >= 400 && status < 500)).toBe(true);
    }
    expect((await call("GET", "/health?deep=true")).body.status).toBe("ok");
  });

  it("one live payment presented 50× concurrently and 50× serially buys once (G8)", async () => {
    const health = await call("GET", "/health?deep=true");
    const rpcUrl = health.body.devchain.url as string;
    const usdc: Hex = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
    const pub = createPublicClient({ transport: http(rpcUrl) });
    const buyer = privateKeyToAccount(generatePrivateKey());
    const funder = createWalletClient({
      account: mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 8 }),
      transport: http(rpcUrl),
    });
    await pub.waitForTransactionReceipt({
      hash: await funder.writeContract({ address: usdc, abi: TestUSDC.abi, functionName: "mint", args: [buyer.address, 1_000_000n], chain: null }),
    });
    const s = await newSeller();
    const c = await newCheckout(s.key, { test_mode: false, reusable: true });
    const required = decoded((await call("GET", `/c/${c.id}`)).headers.get("payment-required"));
    const header = encodeHeader(await signExactEvmPayment(buyer, required.accepts[0], { resourceUrl: required.resource.url }));

    const concurrent = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call("GET", `/c/${c.id}`, { headers: { [i % 2 ? "X-PAYMENT" : "PAYMENT-SIGNATURE"]: header } })),
    );
    const serial = [];
    for (let i = 0; i < 50; i++) serial.push(await call("GET", `/c/${c.id}`, { headers: { [i % 2 ? "X-PAYMENT" : "PAYMENT-SIGNATURE"]: header } }));
    const all = [...concurrent, ...serial];
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(new Set(all.map((r) => r.body.receipt.id)).size).toBe(1);
    expect(all.filter((r) => r.body.redelivered === false)).toHaveLength(1);
    const balance = await pub.readContract({ address: usdc, abi: TestUSDC.abi, functionName: "balanceOf", args: [buyer.address] });
    expect(balance).toBe(1_000_000n - 110_500n);
  });
});
