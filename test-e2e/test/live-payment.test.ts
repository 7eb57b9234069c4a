import { randomBytes } from "node:crypto";
import { TestUSDC } from "@c402/evm-contracts";
import { encodeHeader, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { createWalletClient, http, publicActions, type Hex } from "viem";
import { baseSepolia } from "viem/chains";
import { decodeXPaymentResponse as legacyDecodeXPaymentResponse, wrapFetchWithPayment as legacyWrapFetchWithPayment } from "x402-fetch";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { DEVCHAIN_USDC, devchainWallets, type DevchainWallets } from "../src/devchain";
import { baseUrl, call, decoded, newCheckout, newSeller } from "../src/http";

/**
 * Live settlement on the devchain: money moves on-chain from the buyer to the
 * seller and the fee wallet through the split contract; the service never holds it.
 */
describe("live purchase on the devchain", () => {
  let chain: DevchainWallets;
  let feeWallet: Hex;

  beforeAll(async () => {
    chain = await devchainWallets(5);
    const quote = await call("GET", "/.well-known/c402");
    void quote;
    feeWallet = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720"; // the devchain's last demo account
  });

  async function liveCheckout(body: Record<string, unknown> = {}) {
    const s = await newSeller();
    const c = await newCheckout(s.key, { title: "Live weather", price_usd: "0.10", payload: { temp_c: 22 }, test_mode: false, ...body });
    return { seller: s, checkout: c };
  }

  it("the official @x402/fetch client pays the live face; balances of buyer, seller and fee wallet change exactly", async () => {
    const { seller, checkout } = await liveCheckout();
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.fund(buyer.address, 1_000_000n);
    const before = { buyer: await chain.balance(buyer.address), seller: await chain.balance(seller.wallet.address), fee: await chain.balance(feeWallet) };

    const quote = await call("GET", `/c/${checkout.id}`);
    expect(quote.status).toBe(402);
    const requirement = decoded(quote.headers.get("payment-required")).accepts[0] as PaymentRequirements;
    expect(requirement).toMatchObject({ network: "eip155:84532", asset: DEVCHAIN_USDC, amount: "110500", extra: { name: "USDC", version: "2" } });
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
    const onChain = await chain.pub.getTransactionReceipt({ hash: body.receipt.tx_hash as Hex });
    expect(onChain.status).toBe("success");

    expect(await chain.balance(buyer.address)).toBe(before.buyer - 110_500n);
    expect(await chain.balance(seller.wallet.address)).toBe(before.seller + 100_000n);
    expect(await chain.balance(feeWallet)).toBe(before.fee + 10_500n);

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

  it("the legacy x402-fetch 1.2.0 client pays the live face at its v1 URL (?x402_version=1); balances change exactly", async () => {
    // Under the legacy client's default cap of 0.10 USDC: 0.05 + 0.5% + 0.01 = 0.06025.
    const { seller, checkout } = await liveCheckout({ price_usd: "0.05" });
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.fund(buyer.address, 1_000_000n);
    const before = { seller: await chain.balance(seller.wallet.address), fee: await chain.balance(feeWallet) };

    const v1Url = `${baseUrl()}/c/${checkout.id}?x402_version=1`;
    const quote = await call("GET", `/c/${checkout.id}?x402_version=1`);
    expect(quote.status).toBe(402);
    expect(quote.body).toMatchObject({ x402Version: 1, error: expect.any(String) });
    expect(quote.body.accepts).toEqual([
      {
        scheme: "exact",
        network: "base-sepolia",
        maxAmountRequired: "60250",
        resource: v1Url,
        description: "Live weather",
        mimeType: "application/json",
        payTo: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
        maxTimeoutSeconds: 300,
        asset: DEVCHAIN_USDC,
        extra: { name: "USDC", version: "2", checkoutId: checkout.id },
      },
    ]);
    expect(quote.body.endpoint.pay.legacy_v1_url).toBe(v1Url);
    // The header stays v2, so v2 clients pay this URL too.
    expect(decoded(quote.headers.get("payment-required"))).toMatchObject({ x402Version: 2 });
    expect((await call("GET", `/c/${checkout.id}?x402_version=7`)).status).toBe(422);

    const legacyChain = { ...baseSepolia, rpcUrls: { default: { http: [chain.rpcUrl] } } };
    const wallet = createWalletClient({ account: buyer, chain: legacyChain, transport: http(chain.rpcUrl) }).extend(publicActions);
    const res = await legacyWrapFetchWithPayment(fetch, wallet as never)(v1Url, { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { fulfillment: { payload: unknown }; receipt: Record<string, unknown> };
    expect(body.fulfillment.payload).toEqual({ temp_c: 22 });
    expect(body.receipt).toMatchObject({ test_mode: false, provider_amount: 50000, fee_amount: 10250, total: 60250, payer: buyer.address });
    expect(legacyDecodeXPaymentResponse(res.headers.get("X-PAYMENT-RESPONSE") as string)).toMatchObject({ success: true, transaction: body.receipt.tx_hash });
    expect(await chain.balance(buyer.address)).toBe(1_000_000n - 60_250n);
    expect(await chain.balance(seller.wallet.address)).toBe(before.seller + 50_000n);
    expect(await chain.balance(feeWallet)).toBe(before.fee + 10_250n);
  });

  async function signLive(checkoutId: string, buyer: PrivateKeyAccount) {
    const required = decoded((await call("GET", `/c/${checkoutId}`)).headers.get("payment-required"));
    return encodeHeader(await signExactEvmPayment(buyer, required.accepts[0], { resourceUrl: required.resource.url }));
  }

  it("re-presenting a settled payment redelivers and never charges again; concurrent duplicates settle once", async () => {
    const { seller, checkout } = await liveCheckout({ reusable: true });
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.fund(buyer.address, 1_000_000n);
    const header = await signLive(checkout.id, buyer);
    const results = await Promise.all(Array.from({ length: 8 }, () => call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } })));
    // Status with the problem type, so a failure says why.
    expect(results.map((r) => [r.status, r.body.type ?? null, r.body.detail ?? r.body.error ?? null])).toEqual(Array(8).fill([200, null, null]));
    expect(new Set(results.map((r) => r.body.receipt.id)).size).toBe(1);
    const again = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(again.body).toMatchObject({ redelivered: true, receipt: { id: results[0]!.body.receipt.id } });
    expect(await chain.balance(buyer.address)).toBe(1_000_000n - 110_500n);
    expect(await chain.balance(seller.wallet.address)).toBe(100_000n);
    // A reusable checkout keeps selling.
    expect((await call("GET", `/c/${checkout.id}`)).status).toBe(402);
  });

  it("a page waiting on a handoff nonce sees the payment that carried it (query h); any other nonce looks like no payment", async () => {
    const { checkout } = await liveCheckout({ reusable: true });
    const other = await liveCheckout({ reusable: true });
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.fund(buyer.address, 1_000_000n);
    const nonce = randomBytes(18).toString("base64url");
    const before = await call("GET", `/c/${checkout.id}/handoff/${nonce}`);
    expect(before.status).toBe(404);
    expect(before.body).toMatchObject({ type: expect.stringContaining("not-found") });

    // A malformed nonce on the paid request is refused before anything settles.
    const header = await signLive(checkout.id, buyer);
    const malformed = await call("GET", `/c/${checkout.id}?h=short`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(malformed.status).toBe(422);
    expect(malformed.body.errors).toEqual([{ field: "h", reason: expect.any(String) }]);
    expect(await chain.balance(buyer.address)).toBe(1_000_000n);

    const paid = await call("GET", `/c/${checkout.id}?h=${nonce}`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(paid.status).toBe(200);
    const found = await call("GET", `/c/${checkout.id}/handoff/${nonce}`);
    expect(found.status).toBe(200);
    expect(found.headers.get("cache-control")).toBe("no-store");
    expect(found.body).toEqual({
      payment_id: paid.body.receipt.id,
      receipt_url: `${baseUrl()}/r/${paid.body.receipt.id}`,
      escrow_state: null,
      test_mode: false,
    });

    // A wrong nonce, or the right nonce on another checkout, is indistinguishable from no payment.
    for (const path of [`/c/${checkout.id}/handoff/${randomBytes(18).toString("base64url")}`, `/c/${other.checkout.id}/handoff/${nonce}`]) {
      const r = await call("GET", path);
      expect(r.status).toBe(404);
      const { type, title, detail } = before.body;
      expect(r.body).toMatchObject({ type, title, detail });
    }
    expect((await call("GET", `/c/${checkout.id}/handoff/not-a-nonce!`)).status).toBe(422);
  });

  it("a front-run straight to the token is benign: the buyer still gets the goods and is charged once (G9)", async () => {
    const { seller, checkout } = await liveCheckout({ reusable: true });
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.fund(buyer.address, 1_000_000n);
    const header = await signLive(checkout.id, buyer);
    // Someone who saw the payment submits the buyer's authorization to the token first: the funds land in the split.
    const { payload } = decoded(header);
    const a = payload.authorization;
    const frontRunner = createWalletClient({
      account: mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 6 }),
      transport: http(chain.rpcUrl),
    });
    await chain.pub.waitForTransactionReceipt({
      hash: await frontRunner.writeContract({
        address: DEVCHAIN_USDC,
        abi: TestUSDC.abi,
        functionName: "transferWithAuthorization",
        args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, payload.signature],
        chain: null,
      }),
    });
    expect(await chain.balance(buyer.address)).toBe(1_000_000n - 110_500n);

    const r = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      fulfillment: { mode: "inline", payload: { temp_c: 22 } },
      receipt: { provider_amount: 100000, test_mode: false },
      redelivered: false,
    });
    expect(await chain.balance(buyer.address)).toBe(1_000_000n - 110_500n);
    expect(await chain.balance(seller.wallet.address)).toBe(100_000n);
  });

  it("a settlement that fails on-chain answers 402 with the failure SettleResponse in PAYMENT-RESPONSE, no goods (G11)", async () => {
    const { seller, checkout } = await liveCheckout({ reusable: true });
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.fund(buyer.address, 110_500n); // exactly one purchase
    const required = decoded((await call("GET", `/c/${checkout.id}`)).headers.get("payment-required"));
    const header = encodeHeader(await signExactEvmPayment(buyer, required.accepts[0], { resourceUrl: required.resource.url }));
    // The buyer also signed away the same funds elsewhere; someone submits that one with a higher tip.
    const sink = privateKeyToAccount(generatePrivateKey()).address;
    const drain = await signExactEvmPayment(buyer, { ...required.accepts[0], payTo: sink });
    const d = drain.payload.authorization;
    const rpc = (method: string, params: unknown[] = []) => chain.pub.request({ method: method as never, params: params as never });
    const frontRunner = createWalletClient({
      account: mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 6 }),
      transport: http(chain.rpcUrl),
    });

    await rpc("evm_setAutomine", [false]);
    let purchase: Promise<Awaited<ReturnType<typeof call>>>;
    try {
      purchase = call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } });
      // Wait until the service's settlement is in the mempool (its facilitator's pending nonce moves).
      const pendingTxs = async () => ((await rpc("eth_getBlockByNumber", ["pending", false])) as { transactions: string[] }).transactions.length;
      for (let i = 0; i < 100 && (await pendingTxs()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await pendingTxs()).toBe(1);
      await frontRunner.writeContract({
        address: DEVCHAIN_USDC,
        abi: TestUSDC.abi,
        functionName: "transferWithAuthorization",
        args: [d.from as Hex, d.to as Hex, BigInt(d.value), BigInt(d.validAfter), BigInt(d.validBefore), d.nonce as Hex, drain.payload.signature as Hex],
        // Against the pending block (the settlement already spent the funds) an estimate would fail: the tip orders it first.
        gas: 200_000n,
        maxPriorityFeePerGas: 50_000_000_000n,
        maxFeePerGas: 100_000_000_000n,
        chain: null,
      });
      await rpc("evm_mine");
    } finally {
      await rpc("evm_setAutomine", [true]);
    }
    const r = await purchase;
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ reason: "settlement_failed" });
    expect(r.body.fulfillment).toBeUndefined();
    const settle = decodePaymentResponseHeader(r.headers.get("PAYMENT-RESPONSE") as string);
    expect(settle).toMatchObject({ success: false, errorReason: "settlement_failed", network: "eip155:84532", payer: buyer.address });
    // The settlement transaction was mined and skipped this payment (settleEach): its authorization is unused.
    const mined = await chain.pub.getTransactionReceipt({ hash: settle.transaction as Hex });
    expect(mined.blockNumber).toBeGreaterThan(0n);
    const signed = decoded(header).payload.authorization as { from: Hex; nonce: Hex };
    expect(
      await chain.pub.readContract({ address: DEVCHAIN_USDC, abi: TestUSDC.abi, functionName: "authorizationState", args: [signed.from, signed.nonce] }),
    ).toBe(false);
    expect(await chain.balance(sink)).toBe(110_500n);
    expect(await chain.balance(seller.wallet.address)).toBe(0n);
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
    await chain.fund(buyer.address, 1_000_000n);
    const r = await call("GET", `/c/${b.checkout.id}`, { headers: { "PAYMENT-SIGNATURE": await signLive(a.checkout.id, buyer) } });
    expect(r.status).toBe(402);
    expect(await chain.balance(buyer.address)).toBe(1_000_000n);
  });
});
