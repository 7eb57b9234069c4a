import { TestUSDC } from "@c402/evm-contracts";
import { encodeHeader, signExactEvmPayment } from "@c402/x402";
import { createPublicClient, createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { call, decoded, newCheckout, newSeller } from "../src/http";

/**
 * G21 (malformed payment headers never crash or 5xx; 2,000 here, 10,000 with
 * C402_NIGHTLY=1) and G8 (one payment cannot buy twice: the same payment 50×
 * concurrently and 50× serially, under both header names, on every route that
 * takes a payment today).
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
  }, 180_000);

  describe("one payment cannot buy twice: 50× concurrently then 50× serially, under both header names (G8)", () => {
    const usdc: Hex = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
    let rpcUrl: string;
    const funder = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 8 });
    const pub = () => createPublicClient({ transport: http(rpcUrl) });
    const balance = (a: Hex) => pub().readContract({ address: usdc, abi: TestUSDC.abi, functionName: "balanceOf", args: [a] });

    beforeAll(async () => {
      rpcUrl = (await call("GET", "/health?deep=true")).body.devchain.url;
    });

    async function fundedBuyer() {
      const buyer = privateKeyToAccount(generatePrivateKey());
      const wallet = createWalletClient({ account: funder, transport: http(rpcUrl) });
      await pub().waitForTransactionReceipt({
        hash: await wallet.writeContract({ address: usdc, abi: TestUSDC.abi, functionName: "mint", args: [buyer.address, 1_000_000n], chain: null }),
      });
      return buyer;
    }

    /** 50 at once, then 50 one after another, alternating PAYMENT-SIGNATURE and X-PAYMENT. */
    async function present(path: string, header: string) {
      const send = (i: number) => call("GET", path, { headers: { [i % 2 ? "X-PAYMENT" : "PAYMENT-SIGNATURE"]: header } });
      const concurrent = await Promise.all(Array.from({ length: 50 }, (_, i) => send(i)));
      const serial = [];
      for (let i = 0; i < 50; i++) serial.push(await send(i));
      return [...concurrent, ...serial];
    }

    function expectOneSale(all: Awaited<ReturnType<typeof present>>) {
      expect(all.map((r) => r.status)).toEqual(Array(100).fill(200));
      expect(new Set(all.map((r) => r.body.receipt.id)).size).toBe(1);
      expect(all.filter((r) => r.body.redelivered === false)).toHaveLength(1);
    }

    it.each([
      ["the live face", ""],
      ["the live face's v1 URL with a handoff nonce", "?x402_version=1&h=g8-handoff-nonce-0001"],
    ])("%s: one charge, one receipt", async (_route, query) => {
      const buyer = await fundedBuyer();
      const s = await newSeller();
      const c = await newCheckout(s.key, { test_mode: false, reusable: true });
      const required = decoded((await call("GET", `/c/${c.id}`)).headers.get("payment-required"));
      const header = encodeHeader(await signExactEvmPayment(buyer, required.accepts[0], { resourceUrl: required.resource.url }));
      expectOneSale(await present(`/c/${c.id}${query}`, header));
      expect(await balance(buyer.address)).toBe(1_000_000n - 110_500n);
    });

    it("the rehearsal face: one simulated settlement, one receipt", async () => {
      const s = await newSeller();
      const c = await newCheckout(s.key);
      const required = decoded((await call("GET", `/c/${c.id}/test`)).headers.get("payment-required"));
      const header = encodeHeader(await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), required.accepts[0]));
      expectOneSale(await present(`/c/${c.id}/test`, header));
    });

    it("the facilitator's settle: one success, every other attempt refused, one transfer", async () => {
      const buyer = await fundedBuyer();
      const payTo = privateKeyToAccount(generatePrivateKey()).address;
      const requirement = {
        scheme: "exact",
        network: "eip155:84532",
        asset: usdc,
        amount: "250000",
        payTo,
        maxTimeoutSeconds: 120,
        extra: { name: "USDC", version: "2" },
      };
      const payload = await signExactEvmPayment(buyer, requirement);
      const body = { network: "eip155:84532", requirement, payload };
      const concurrent = await Promise.all(Array.from({ length: 50 }, () => call("POST", "/x402/base/settle", { body })));
      const serial = [];
      for (let i = 0; i < 50; i++) serial.push(await call("POST", "/x402/base/settle", { body }));
      const all = [...concurrent, ...serial];
      expect(all.every((r) => r.status === 200)).toBe(true);
      expect(all.filter((r) => r.body.success === true)).toHaveLength(1);
      expect(await balance(buyer.address)).toBe(1_000_000n - 250_000n);
      expect(await balance(payTo)).toBe(250_000n);
    });
  });
});
