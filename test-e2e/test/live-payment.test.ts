import { TestUSDC } from "@c402/evm-contracts";
import { encodeHeader, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { baseUrl, call, decoded, newCheckout, newSeller } from "../src/http";

/**
 * Live settlement on the devchain: money moves on-chain from the buyer to the
 * seller and the fee wallet through the split contract; the service never holds it.
 */
describe("live purchase on the devchain", () => {
  let rpcUrl: string;
  let usdc: Hex;
  let feeWallet: Hex;
  const funder = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 5 });

  beforeAll(async () => {
    const health = await call("GET", "/health?deep=true");
    rpcUrl = health.body.devchain.url;
    const quote = await call("GET", "/.well-known/c402");
    void quote;
    usdc = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
    feeWallet = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720"; // the devchain's last demo account
  });

  const pub = () => createPublicClient({ transport: http(rpcUrl) });
  const balance = (a: Hex) => pub().readContract({ address: usdc, abi: TestUSDC.abi, functionName: "balanceOf", args: [a] });
  async function fund(to: Hex, amount: bigint) {
    const wallet = createWalletClient({ account: funder, transport: http(rpcUrl) });
    const hash = await wallet.writeContract({ address: usdc, abi: TestUSDC.abi, functionName: "mint", args: [to, amount], chain: null });
    await pub().waitForTransactionReceipt({ hash });
  }
  async function liveCheckout(body: Record<string, unknown> = {}) {
    const s = await newSeller();
    const c = await newCheckout(s.key, { title: "Live weather", price_usd: "0.10", payload: { temp_c: 22 }, test_mode: false, ...body });
    return { seller: s, checkout: c };
  }

  it("the official @x402/fetch client pays the live face; balances of buyer, seller and fee wallet change exactly", async () => {
    const { seller, checkout } = await liveCheckout();
    const buyer = privateKeyToAccount(generatePrivateKey());
    await fund(buyer.address, 1_000_000n);
    const before = { buyer: await balance(buyer.address), seller: await balance(seller.wallet.address), fee: await balance(feeWallet) };

    const quote = await call("GET", `/c/${checkout.id}`);
    expect(quote.status).toBe(402);
    const requirement = decoded(quote.headers.get("payment-required")).accepts[0] as PaymentRequirements;
    expect(requirement).toMatchObject({ network: "eip155:84532", asset: usdc, amount: "110500", extra: { name: "USDC", version: "2" } });
    expect(requirement.payTo.toLowerCase()).not.toBe(seller.wallet.address.toLowerCase());

    const client = new x402Client();
    registerExactEvmScheme(client, { signer: buyer });
    const res = await wrapFetchWithPayment(fetch, client)(`${baseUrl()}/c/${checkout.id}`, { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { fulfillment: { payload: unknown }; receipt: Record<string, unknown> };
    expect(body.fulfillment.payload).toEqual({ temp_c: 22 });
    expect(body.receipt).toMatchObject({
      test_mode: false,
      network: "eip155:84532",
      provider_amount: 100000,
      fee_amount: 10500,
      total: 110500,
      payer: buyer.address,
      pay_to: seller.wallet.address,
    });
    const settle = decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE") as string);
    expect(settle).toMatchObject({ success: true, network: "eip155:84532", transaction: body.receipt.tx_hash });
    const onChain = await pub().getTransactionReceipt({ hash: body.receipt.tx_hash as Hex });
    expect(onChain.status).toBe("success");

    expect(await balance(buyer.address)).toBe(before.buyer - 110_500n);
    expect(await balance(seller.wallet.address)).toBe(before.seller + 100_000n);
    expect(await balance(feeWallet)).toBe(before.fee + 10_500n);

    // A single-shot checkout becomes paid and stops selling.
    let status = "";
    for (let i = 0; i < 100 && status !== "paid"; i++) {
      status = (await call("GET", `/v1/checkouts/${checkout.id}`, { key: seller.key })).body.status;
      if (status !== "paid") await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe("paid");
    expect((await call("GET", `/c/${checkout.id}`)).status).toBe(410);
    expect((await call("GET", `/r/${body.receipt.id}`)).body).toMatchObject({ id: body.receipt.id, test_mode: false, tx_hash: body.receipt.tx_hash });
  });

  async function signLive(checkoutId: string, buyer: PrivateKeyAccount) {
    const required = decoded((await call("GET", `/c/${checkoutId}`)).headers.get("payment-required"));
    return encodeHeader(await signExactEvmPayment(buyer, required.accepts[0], { resourceUrl: required.resource.url }));
  }

  it("re-presenting a settled payment redelivers and never charges again; concurrent duplicates settle once", async () => {
    const { seller, checkout } = await liveCheckout({ reusable: true });
    const buyer = privateKeyToAccount(generatePrivateKey());
    await fund(buyer.address, 1_000_000n);
    const header = await signLive(checkout.id, buyer);
    const results = await Promise.all(Array.from({ length: 8 }, () => call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(new Set(results.map((r) => r.body.receipt.id)).size).toBe(1);
    const again = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(again.body).toMatchObject({ redelivered: true, receipt: { id: results[0]!.body.receipt.id } });
    expect(await balance(buyer.address)).toBe(1_000_000n - 110_500n);
    expect(await balance(seller.wallet.address)).toBe(100_000n);
    // A reusable checkout keeps selling.
    expect((await call("GET", `/c/${checkout.id}`)).status).toBe(402);
  });

  it("a buyer without the funds gets a 402 naming the reason, no goods and no receipt", async () => {
    const { checkout } = await liveCheckout({ reusable: true });
    const buyer = privateKeyToAccount(generatePrivateKey());
    const r = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": await signLive(checkout.id, buyer) } });
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ reason: "invalid_exact_evm_insufficient_balance" });
    expect(r.body.fulfillment).toBeUndefined();
  });

  it("a payment signed for another checkout's split cannot pay this one", async () => {
    const a = await liveCheckout({ reusable: true });
    const b = await liveCheckout({ reusable: true });
    const buyer = privateKeyToAccount(generatePrivateKey());
    await fund(buyer.address, 1_000_000n);
    const r = await call("GET", `/c/${b.checkout.id}`, { headers: { "PAYMENT-SIGNATURE": await signLive(a.checkout.id, buyer) } });
    expect(r.status).toBe(402);
    expect(await balance(buyer.address)).toBe(1_000_000n);
  });
});
