import { newSolanaKeyPair } from "@c402/solana-devnet";
import { generateKeyPairSigner, getBase58Decoder, type KeyPairSigner } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { toClientSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { createSigner, decodeXPaymentResponse as legacyDecodeXPaymentResponse, wrapFetchWithPayment as legacyWrapFetchWithPayment } from "x402-fetch";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { baseUrl, call, decoded, newCheckout, newSeller, type Reply } from "../src/http";
import { DEVNET_USDC, signPrepared, SOLANA_DEVNET, solanaDevnet, type SolanaDevnetClient } from "../src/solana";

/**
 * Live settlement on the local Solana devnet (docs/adr/0015-solana-one-transfer.md)
 * with the official clients, unmodified: `@x402/fetch` with the `@x402/svm`
 * exact client. One transfer of the price from the buyer to the seller's USDC
 * account; the service only adds its fee payer's signature.
 */
describe("live purchase on Solana (devnet) with the official @x402/svm client", () => {
  let devnet: SolanaDevnetClient;
  let feePayer: string;

  beforeAll(async () => {
    devnet = await solanaDevnet();
    const supported = await call("GET", "/x402/solana/supported");
    feePayer = supported.body.kinds[0]?.extra?.feePayer;
  });

  /** A seller whose standing Solana wallet (its USDC account created, empty) the checkout copies as a payout rail. */
  async function solanaSeller() {
    const seller = await newSeller();
    const wallet = (await generateKeyPairSigner()).address as string;
    await devnet.setUsdc(wallet, 0n);
    const put = await call("PUT", "/v1/account/wallets", { key: seller.key, body: { solana: wallet } });
    expect(put.status).toBe(200);
    return { seller, solana: wallet };
  }

  async function liveSolanaCheckout(body: Record<string, unknown> = {}) {
    const { seller, solana } = await solanaSeller();
    const checkout = await newCheckout(seller.key, { title: "Live Solana weather", price_usd: "0.10", payload: { temp_c: 23 }, test_mode: false, ...body });
    return { seller, solana, checkout };
  }

  async function fundedBuyer(amount = 1_000_000n): Promise<KeyPairSigner> {
    const buyer = await generateKeyPairSigner();
    await devnet.setUsdc(buyer.address, amount);
    return buyer;
  }

  function svmClient(buyer: KeyPairSigner) {
    return new x402Client().register("solana:*", new ExactSvmScheme(toClientSvmSigner(buyer), { rpcUrl: devnet.url }));
  }

  async function paymentRequired(checkoutId: string): Promise<PaymentRequired> {
    const quote = await call("GET", `/c/${checkoutId}`);
    expect(quote.status).toBe(402);
    return decoded(quote.headers.get("payment-required")) as PaymentRequired;
  }

  const solanaOf = (required: PaymentRequired) => required.accepts.find((a) => a.network.startsWith("solana:"));

  /** The problem a refused payment gets, with what the test needs to say why on failure. */
  const refusal = (r: Reply) => ({ status: r.status, reason: r.body?.reason, fulfillment: r.body?.fulfillment });

  it("lists a Solana requirement on the live face: the price, to the seller's wallet, the service's fee payer", async () => {
    const { solana, checkout } = await liveSolanaCheckout();
    const required = await paymentRequired(checkout.id);
    expect(required.accepts.map((a) => a.network)).toEqual(["eip155:84532", SOLANA_DEVNET]);
    expect(solanaOf(required)).toEqual({
      scheme: "exact",
      network: SOLANA_DEVNET,
      asset: DEVNET_USDC,
      amount: "100000",
      payTo: solana,
      maxTimeoutSeconds: 300,
      extra: { feePayer, checkoutId: checkout.id },
      resource: `${baseUrl()}/c/${checkout.id}`,
    });
    expect(feePayer).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  });

  it("the official client pays the live face in one round trip: goods, PAYMENT-RESPONSE, receipt; balances move by the price exactly", async () => {
    const { solana, checkout, seller } = await liveSolanaCheckout();
    const buyer = await fundedBuyer();
    const signatures: string[] = [];
    const counting: typeof fetch = async (input, init) => {
      const req = new Request(input, init);
      if (req.headers.get("payment-signature")) signatures.push(req.headers.get("payment-signature") as string);
      return fetch(req);
    };
    const res = await wrapFetchWithPayment(counting, svmClient(buyer))(`${baseUrl()}/c/${checkout.id}`, { headers: { accept: "application/json" } });
    const text = await res.text();
    expect([res.status, text.slice(0, 0)]).toEqual([200, ""]);
    expect(signatures).toHaveLength(1);
    const body = JSON.parse(text) as { fulfillment: { payload: unknown }; receipt: Record<string, unknown> };
    expect(body.fulfillment.payload).toEqual({ temp_c: 23 });
    expect(body.receipt).toMatchObject({
      test_mode: false,
      network: SOLANA_DEVNET,
      provider_amount: 100_000,
      fee_amount: 0,
      platform_amount: null,
      total: 100_000,
      pay_to: solana,
      payer: buyer.address,
    });
    const settle = decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE") as string);
    expect(settle).toMatchObject({ success: true, network: SOLANA_DEVNET, payer: buyer.address, transaction: body.receipt.tx_hash });
    expect(settle.transaction).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);

    // The transaction on the devnet: one, finalized, without error, paid for by the service's fee payer.
    const tx = await devnet.rpc<{ meta: { err: unknown }; transaction: { message: { accountKeys: string[] } } }>("getTransaction", [
      settle.transaction,
      { encoding: "json", maxSupportedTransactionVersion: 0 },
    ]);
    expect(tx.meta.err).toBeNull();
    expect(tx.transaction.message.accountKeys[0]).toBe(feePayer);

    expect(await devnet.usdc(buyer.address)).toBe(1_000_000n - 100_000n);
    expect(await devnet.usdc(solana)).toBe(100_000n);

    const receipt = await call("GET", `/r/${body.receipt.id}`);
    expect(receipt.status).toBe(200);
    expect(receipt.body).toMatchObject({
      id: body.receipt.id,
      test_mode: false,
      network: SOLANA_DEVNET,
      tx_hash: settle.transaction,
      provider_amount: 100_000,
      fee_amount: 0,
      platform_amount: null,
      total: 100_000,
      pay_to: solana,
      payer: buyer.address,
    });

    // A single-shot checkout becomes paid and stops selling.
    let status = "";
    for (let i = 0; i < 100 && status !== "paid"; i++) {
      status = (await call("GET", `/v1/checkouts/${checkout.id}`, { key: seller.key })).body.status;
      if (status !== "paid") await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe("paid");
    expect((await call("GET", `/c/${checkout.id}`)).status).toBe(410);
  });

  it("the legacy x402-fetch 1.2.0 client pays the live face on solana-devnet at its v1 URL (?x402_version=1); balances move by the price", async () => {
    const { solana, checkout } = await liveSolanaCheckout();
    const buyer = newSolanaKeyPair();
    await devnet.setUsdc(buyer.address, 1_000_000n);
    const v1Url = `${baseUrl()}/c/${checkout.id}?x402_version=1`;
    const quote = await call("GET", `/c/${checkout.id}?x402_version=1`);
    expect(quote.status).toBe(402);
    expect(quote.body.accepts.map((a: { network: string }) => a.network)).toEqual(["base-sepolia", "solana-devnet"]);
    expect(quote.body.accepts[1]).toMatchObject({ maxAmountRequired: "100000", payTo: solana, asset: DEVNET_USDC, resource: v1Url, extra: { feePayer } });
    const signer = await createSigner("solana-devnet", getBase58Decoder().decode(Uint8Array.from(JSON.parse(buyer.secretKey) as number[])));
    const res = await legacyWrapFetchWithPayment(fetch, signer, undefined, undefined, { svmConfig: { rpcUrl: devnet.url } })(v1Url, {
      headers: { accept: "application/json" },
    });
    const text = await res.text();
    expect([res.status, res.status === 200 ? "" : text]).toEqual([200, ""]);
    const body = JSON.parse(text) as { fulfillment: { payload: unknown }; receipt: Record<string, unknown> };
    expect(body.fulfillment.payload).toEqual({ temp_c: 23 });
    expect(body.receipt).toMatchObject({ network: SOLANA_DEVNET, total: 100_000, fee_amount: 0, pay_to: solana, payer: buyer.address });
    expect(legacyDecodeXPaymentResponse(res.headers.get("X-PAYMENT-RESPONSE") as string)).toMatchObject({ success: true, transaction: body.receipt.tx_hash });
    expect(await devnet.usdc(buyer.address)).toBe(1_000_000n - 100_000n);
    expect(await devnet.usdc(solana)).toBe(100_000n);
  });

  it("POST /c/{id}/prepare on the Solana network answers a transaction the buyer's wallet signs and /pay settles (no typed data)", async () => {
    const { solana, checkout } = await liveSolanaCheckout({ reusable: true });
    const buyer = await fundedBuyer();
    const prepared = await call("POST", `/c/${checkout.id}/prepare`, { body: { payer: buyer.address, network: SOLANA_DEVNET } });
    expect(prepared.status).toBe(200);
    expect(prepared.body).toMatchObject({
      network: SOLANA_DEVNET,
      typed_data: null,
      transaction: expect.stringMatching(/^[A-Za-z0-9+/]+={0,2}$/),
      payload_stub: {
        x402Version: 2,
        accepted: { network: SOLANA_DEVNET, payTo: solana, amount: "100000", extra: { feePayer } },
        payload: { transaction: "" },
      },
      pay_url: `${baseUrl()}/c/${checkout.id}`,
    });
    const stub = prepared.body.payload_stub;
    const header = encodePaymentSignatureHeader({ ...stub, payload: { transaction: await signPrepared(prepared.body.transaction, buyer) } });
    const paid = await call("POST", `/c/${checkout.id}/pay`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect([paid.status, paid.body.type ?? null]).toEqual([200, null]);
    expect(paid.body.receipt).toMatchObject({ network: SOLANA_DEVNET, pay_to: solana, total: 100_000, payer: buyer.address });
    expect(await devnet.usdc(buyer.address)).toBe(1_000_000n - 100_000n);
    expect(await devnet.usdc(solana)).toBe(100_000n);

    // Not a Solana wallet: 422 naming payer, nothing prepared.
    const bad = await call("POST", `/c/${checkout.id}/prepare`, { body: { payer: "0x1111111111111111111111111111111111111111", network: SOLANA_DEVNET } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain("payer");
  });

  /** The PAYMENT-SIGNATURE the official client sends for this face, captured and never delivered. */
  async function capturedSignature(checkoutId: string, buyer: KeyPairSigner): Promise<string> {
    let captured: string | undefined;
    const capturing: typeof fetch = async (input, init) => {
      const req = new Request(input, init);
      const header = req.headers.get("payment-signature");
      if (header) {
        captured = header;
        return new Response("captured", { status: 299 });
      }
      return fetch(req);
    };
    await wrapFetchWithPayment(capturing, svmClient(buyer))(`${baseUrl()}/c/${checkoutId}`, { headers: { accept: "application/json" } });
    if (!captured) throw new Error("the official client sent no PAYMENT-SIGNATURE");
    return captured;
  }

  it("the same signed payment presented 20 times at once settles once: every answer the one receipt, balances moved once", async () => {
    const { solana, checkout } = await liveSolanaCheckout({ reusable: true });
    const buyer = await fundedBuyer();
    const header = await capturedSignature(checkout.id, buyer);
    const results = await Promise.all(Array.from({ length: 20 }, () => call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } })));
    expect(results.map((r) => [r.status, r.body.type ?? null, r.body.detail ?? r.body.error ?? null])).toEqual(Array(20).fill([200, null, null]));
    const ids = new Set(results.map((r) => r.body.receipt.id));
    expect(ids.size).toBe(1);
    const txs = new Set(results.map((r) => decodePaymentResponseHeader(r.headers.get("PAYMENT-RESPONSE") as string).transaction));
    expect(txs.size).toBe(1);
    expect(results.filter((r) => r.body.redelivered !== true)).toHaveLength(1);
    const again = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(again.body).toMatchObject({ redelivered: true, receipt: { id: [...ids][0] } });

    expect(await devnet.usdc(buyer.address)).toBe(1_000_000n - 100_000n);
    expect(await devnet.usdc(solana)).toBe(100_000n);
    // A reusable checkout keeps selling.
    expect((await call("GET", `/c/${checkout.id}`)).status).toBe(402);
  });

  describe("refusals: nothing broadcast, balances unchanged, a precise reason", () => {
    /** Signs with the official client for `requirement` (possibly not the one issued), presenting it as made for `accepted`. */
    async function signedFor(buyer: KeyPairSigner, required: PaymentRequired, requirement: PaymentRequirements, accepted: PaymentRequirements = requirement) {
      const payload = await svmClient(buyer).createPaymentPayload({ ...required, accepts: [requirement] });
      return encodePaymentSignatureHeader({ ...payload, accepted });
    }

    async function expectRefused(checkoutId: string, header: string, reason: string, balances: { buyer: string; seller: string }) {
      const r = await call("GET", `/c/${checkoutId}`, { headers: { "PAYMENT-SIGNATURE": header } });
      expect(refusal(r)).toEqual({ status: 402, reason, fulfillment: undefined });
      expect(r.body.receipt).toBeUndefined();
      // A Solana refusal says how Solana buyers sign (a refusal before the rail is known names the face's /prepare).
      if (reason.startsWith("invalid_exact_svm_")) expect(r.body.help.prepare).toMatch(/x402 SVM client/);
      else expect(r.body.help.prepare).toMatch(/\/prepare with/);
      expect(await devnet.usdc(balances.buyer)).toBe(1_000_000n);
      expect(await devnet.usdc(balances.seller)).toBe(0n);
      return r;
    }

    it("a payment made for another amount matches no requirement this face issued", async () => {
      const { solana, checkout } = await liveSolanaCheckout({ reusable: true });
      const buyer = await fundedBuyer();
      const required = await paymentRequired(checkout.id);
      const real = solanaOf(required) as PaymentRequirements;
      const cheaper = { ...real, amount: "1" };
      await expectRefused(checkout.id, await signedFor(buyer, required, cheaper), "no_matching_requirements", { buyer: buyer.address, seller: solana });
      // The same transaction claiming the issued requirement: the transfer's amount is checked.
      await expectRefused(checkout.id, await signedFor(buyer, required, cheaper, real), "invalid_exact_svm_payload_amount_mismatch", {
        buyer: buyer.address,
        seller: solana,
      });
    });

    it("a transfer to another destination is refused", async () => {
      const { solana, checkout } = await liveSolanaCheckout({ reusable: true });
      const buyer = await fundedBuyer();
      const required = await paymentRequired(checkout.id);
      const real = solanaOf(required) as PaymentRequirements;
      const thief = (await generateKeyPairSigner()).address as string;
      await devnet.setUsdc(thief, 0n);
      const elsewhere = { ...real, payTo: thief };
      await expectRefused(checkout.id, await signedFor(buyer, required, elsewhere), "no_matching_requirements", { buyer: buyer.address, seller: solana });
      await expectRefused(checkout.id, await signedFor(buyer, required, elsewhere, real), "invalid_exact_svm_payload_recipient_mismatch", {
        buyer: buyer.address,
        seller: solana,
      });
      expect(await devnet.usdc(thief)).toBe(0n);
    });

    it("a transaction whose blockhash expired (151 blocks) is refused", async () => {
      const { solana, checkout } = await liveSolanaCheckout({ reusable: true });
      const buyer = await fundedBuyer();
      const required = await paymentRequired(checkout.id);
      const header = await signedFor(buyer, required, solanaOf(required) as PaymentRequirements);
      await devnet.advanceBlocks(151);
      await expectRefused(checkout.id, header, "invalid_exact_svm_transaction_simulation_failed", { buyer: buyer.address, seller: solana });
    });
  });

  describe("a relay checkout on Solana: paid only on delivery, inside the transaction's blockhash life", () => {
    let origin: FakeOrigin;
    beforeAll(async () => {
      origin = await startFakeOrigin();
    });
    afterAll(() => origin.close());

    async function relaySolanaCheckout(path: string) {
      return liveSolanaCheckout({ title: `Relay ${path}`, payload: undefined, origin_url: `${origin.url}${path}`, reusable: true });
    }

    it("the official client pays it in one round trip: the origin's answer, one transfer of the price, the origin called once", async () => {
      const { solana, checkout } = await relaySolanaCheckout("/echo");
      expect(solanaOf(await paymentRequired(checkout.id))).toMatchObject({ network: SOLANA_DEVNET, payTo: solana, amount: "100000" });
      const buyer = await fundedBuyer();
      const res = await wrapFetchWithPayment(fetch, svmClient(buyer))(`${baseUrl()}/c/${checkout.id}?city=Lisbon`, { headers: { accept: "application/json" } });
      const text = await res.text();
      expect([res.status, text.slice(0, 200)]).toEqual([200, expect.any(String)]);
      const body = JSON.parse(text) as { fulfillment: Record<string, unknown>; receipt: Record<string, unknown> };
      expect(body.fulfillment).toMatchObject({ mode: "relay", origin_status: 200, payload: { method: "GET", query: { city: "Lisbon" } } });
      expect(body.receipt).toMatchObject({
        network: SOLANA_DEVNET,
        total: 100_000,
        fee_amount: 0,
        pay_to: solana,
        payer: buyer.address,
        delivery: { outcome: "delivered" },
      });
      const settle = decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE") as string);
      expect(settle).toMatchObject({ success: true, network: SOLANA_DEVNET, payer: buyer.address });
      expect(origin.callsTo("/echo")).toHaveLength(1);
      expect(await devnet.usdc(buyer.address)).toBe(1_000_000n - 100_000n);
      expect(await devnet.usdc(solana)).toBe(100_000n);
    });

    it("the same payment presented 5 times at once: the origin called once, one transfer, one receipt", async () => {
      const { solana, checkout } = await relaySolanaCheckout("/text");
      const buyer = await fundedBuyer();
      const header = await capturedSignature(checkout.id, buyer);
      const results = await Promise.all(Array.from({ length: 5 }, () => call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } })));
      const settled = results.filter((r) => r.status === 200);
      expect(settled.length).toBeGreaterThanOrEqual(1);
      // A duplicate that arrives while the origin answers is told to present it again (409, retry safe), never charged twice.
      expect(results.filter((r) => r.status !== 200).map((r) => r.status)).toEqual(Array(5 - settled.length).fill(409));
      expect(new Set(settled.map((r) => decodePaymentResponseHeader(r.headers.get("PAYMENT-RESPONSE") as string).transaction)).size).toBe(1);
      expect(settled.map((r) => r.body.fulfillment.payload)).toEqual(Array(settled.length).fill("sunny, 21 °C"));
      expect(new Set(settled.map((r) => r.body.receipt.id)).size).toBe(1);
      expect(origin.callsTo("/text")).toHaveLength(1);
      expect(await devnet.usdc(buyer.address)).toBe(1_000_000n - 100_000n);
      expect(await devnet.usdc(solana)).toBe(100_000n);
    });

    it("an origin that fails is not charged: nothing sent, no USDC moved", async () => {
      const { solana, checkout } = await relaySolanaCheckout("/status/503");
      const buyer = await fundedBuyer();
      const header = await capturedSignature(checkout.id, buyer);
      const failed = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } });
      expect(failed.status).toBe(502);
      expect(failed.body.type).toMatch(/\/problems\/upstream-failed$/);
      expect(failed.headers.get("payment-response")).toBeNull();
      expect(await devnet.usdc(buyer.address)).toBe(1_000_000n);
      expect(await devnet.usdc(solana)).toBe(0n);
    });

    it("a transaction whose blockhash leaves too little time for the origin and the settlement is refused before the origin is called", async () => {
      const { solana, checkout } = await relaySolanaCheckout("/echo");
      const buyer = await fundedBuyer();
      const header = await capturedSignature(checkout.id, buyer);
      const calls = origin.callsTo("/echo").length;
      // 100 blocks on, 50 remain (20 s at 400 ms): less than the settlement wait and its margins.
      await devnet.advanceBlocks(100);
      const r = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } });
      expect(refusal(r)).toEqual({ status: 402, reason: "invalid_exact_svm_payload_blockhash_expires_too_soon", fulfillment: undefined });
      expect(origin.callsTo("/echo")).toHaveLength(calls);
      expect(await devnet.usdc(buyer.address)).toBe(1_000_000n);
      expect(await devnet.usdc(solana)).toBe(0n);
    });
  });

  it("offered only where one transfer to the seller carries the sale: not with a platform cut, not without a Solana wallet", async () => {
    // No Solana wallet: Base only.
    const plain = await newCheckout((await newSeller()).key, { title: "No Solana", test_mode: false });
    expect((await paymentRequired(plain.id)).accepts.map((a) => a.network)).toEqual(["eip155:84532"]);

    // A platform's checkout (a cut), with a Solana rail added.
    const platform = await newSeller();
    const put = await call("PUT", "/v1/account/platform", {
      key: platform.key,
      body: { platform_account: true, platform_fee_bps: 300, platform_fee_to: platform.wallet.address.toLowerCase() },
    });
    expect(put.status).toBe(200);
    const subSeller = (await newSeller()).wallet.address;
    const cut = await newCheckout(platform.key, { title: "Cut", pay_to: subSeller, test_mode: false, reusable: true });
    const subSellerSolana = (await generateKeyPairSigner()).address;
    await devnet.setUsdc(subSellerSolana, 0n); // a rail is added only with its USDC account
    const added = await call("POST", `/v1/checkouts/${cut.id}/payouts`, { key: platform.key, body: { chain: "solana", address: subSellerSolana } });
    expect(added.status).toBe(200);
    expect((await paymentRequired(cut.id)).accepts.map((a) => a.network)).toEqual(["eip155:84532"]);
  });

  it("a platform's checkout on Solana: /prepare answers two transfers (the seller's share, the cut), the buyer's wallet signs, both move on-chain exactly", async () => {
    // A platform with a standing Solana wallet (its USDC account created) takes 15 % of a sub-seller's sale.
    const platform = await newSeller();
    const platformSolana = (await generateKeyPairSigner()).address as string;
    await devnet.setUsdc(platformSolana, 0n);
    expect((await call("PUT", "/v1/account/wallets", { key: platform.key, body: { solana: platformSolana } })).status).toBe(200);
    const put = await call("PUT", "/v1/account/platform", {
      key: platform.key,
      body: { platform_account: true, platform_fee_bps: 1500, platform_fee_to: platform.wallet.address.toLowerCase() },
    });
    expect(put.status).toBe(200);
    const cut = await newCheckout(platform.key, {
      title: "Sold for a sub-seller",
      price_usd: "0.40",
      pay_to: (await newSeller()).wallet.address,
      test_mode: false,
    });
    expect(cut.platform_fee_wallets.solana).toBe(platformSolana);
    const subSellerSolana = (await generateKeyPairSigner()).address as string;
    await devnet.setUsdc(subSellerSolana, 0n);
    expect((await call("POST", `/v1/checkouts/${cut.id}/payouts`, { key: platform.key, body: { chain: "solana", address: subSellerSolana } })).status).toBe(
      200,
    );

    const buyer = await fundedBuyer();
    const prepared = await call("POST", `/c/${cut.id}/prepare`, { body: { payer: buyer.address, network: SOLANA_DEVNET } });
    expect(prepared.status).toBe(200);
    expect(prepared.body.payload_stub.accepted).toMatchObject({
      network: SOLANA_DEVNET,
      amount: "400000",
      payTo: subSellerSolana,
      extra: {
        feePayer,
        checkoutId: cut.id,
        transfers: [
          { payTo: subSellerSolana, amount: "340000" },
          { payTo: platformSolana, amount: "60000" },
        ],
      },
    });
    const header = encodePaymentSignatureHeader({
      ...prepared.body.payload_stub,
      payload: { transaction: await signPrepared(prepared.body.transaction, buyer) },
    });
    const paid = await call("GET", `/c/${cut.id}`, { headers: { "PAYMENT-SIGNATURE": header, accept: "application/json" } });
    expect([paid.status, paid.body.type ?? null]).toEqual([200, null]);
    expect(paid.body.receipt).toMatchObject({
      network: SOLANA_DEVNET,
      pay_to: subSellerSolana,
      provider_amount: 340_000,
      platform_amount: 60_000,
      platform_fee_to: platformSolana,
      fee_amount: 0,
      total: 400_000,
      payer: buyer.address,
    });
    const settle = decodePaymentResponseHeader(paid.headers.get("PAYMENT-RESPONSE") as string);
    // One transaction, both transfers in it.
    const tx = await devnet.rpc<{ meta: { err: unknown; postTokenBalances: { owner: string; uiTokenAmount: { amount: string } }[] } }>("getTransaction", [
      settle.transaction,
      { encoding: "json", maxSupportedTransactionVersion: 0 },
    ]);
    expect(tx.meta.err).toBeNull();
    expect(await devnet.usdc(subSellerSolana)).toBe(340_000n);
    expect(await devnet.usdc(platformSolana)).toBe(60_000n);
    expect(await devnet.usdc(buyer.address)).toBe(1_000_000n - 400_000n);
  });

  describe("the rehearsal face: the official client pays unmodified, settled simulated, no USDC moves", () => {
    let origin: FakeOrigin;

    beforeAll(async () => {
      origin = await startFakeOrigin();
    });
    afterAll(() => origin?.close());

    async function rehearsalRequired(checkoutId: string): Promise<PaymentRequired> {
      const quote = await call("GET", `/c/${checkoutId}/test`);
      expect(quote.status).toBe(402);
      return decoded(quote.headers.get("payment-required")) as PaymentRequired;
    }

    /** Pays `path` with the official client (Solana only), expecting the goods; answers the body and the PAYMENT-RESPONSE. */
    async function paidRehearsal(buyer: KeyPairSigner, path: string) {
      const res = await wrapFetchWithPayment(fetch, svmClient(buyer))(`${baseUrl()}${path}`, { headers: { accept: "application/json" } });
      const text = await res.text();
      expect([res.status, res.status === 200 ? "" : text]).toEqual([200, ""]);
      const settle = decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE") as string);
      return { body: JSON.parse(text) as { fulfillment: { payload: Record<string, unknown> }; receipt: Record<string, unknown> }, settle };
    }

    it("quotes the live Solana requirement's shape with a fee payer no key exists for, beside the EVM one", async () => {
      const { solana, checkout } = await liveSolanaCheckout();
      const required = await rehearsalRequired(checkout.id);
      expect(required.accepts.map((a) => a.network)).toEqual(["eip155:84532", SOLANA_DEVNET]);
      const rehearsal = solanaOf(required);
      expect(rehearsal).toEqual({
        scheme: "exact",
        network: SOLANA_DEVNET,
        asset: DEVNET_USDC,
        amount: "100000",
        payTo: solana,
        maxTimeoutSeconds: 300,
        extra: { feePayer: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/), rehearsal: true, checkoutId: checkout.id },
        resource: `${baseUrl()}/c/${checkout.id}/test`,
      });
      expect(rehearsal?.extra.feePayer).not.toBe(feePayer);
    });

    it("an inline checkout: goods and a test-mode receipt on Solana with a synthetic hash; balances unchanged", async () => {
      const { solana, checkout } = await liveSolanaCheckout({ reusable: true });
      const buyer = await fundedBuyer();
      const { body, settle } = await paidRehearsal(buyer, `/c/${checkout.id}/test`);
      expect(body.fulfillment.payload).toEqual({ temp_c: 23 });
      expect(body.receipt).toMatchObject({ test_mode: true, network: SOLANA_DEVNET, payer: buyer.address, pay_to: solana, total: 100_000, fee_amount: 0 });
      expect(settle).toMatchObject({ success: true, network: SOLANA_DEVNET, payer: buyer.address, transaction: body.receipt.tx_hash });
      // 0x and hex: never a Solana signature, which is base58 (no "0", no "x").
      expect(settle.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      const receipt = await call("GET", `/r/${body.receipt.id}`);
      expect(receipt.body).toMatchObject({ test_mode: true, network: SOLANA_DEVNET, tx_hash: settle.transaction });
      const byTx = await call("GET", `/r/by-tx/${settle.transaction}`);
      expect([byTx.status, byTx.body.id]).toEqual([200, body.receipt.id]);
      expect(await devnet.usdc(buyer.address)).toBe(1_000_000n);
      expect(await devnet.usdc(solana)).toBe(0n);
      // The rehearsal leaves the live face selling.
      expect((await call("GET", `/c/${checkout.id}`)).status).toBe(402);
    });

    it("a relay checkout: the origin on loopback delivers, then the rehearsal settles; balances unchanged", async () => {
      const { seller, solana } = await solanaSeller();
      const relay = await newCheckout(seller.key, {
        title: "Relay rehearsal",
        price_usd: "0.10",
        payload: undefined,
        origin_url: `${origin.url}/echo`,
        reusable: true,
      });
      const buyer = await fundedBuyer();
      expect(solanaOf(await rehearsalRequired(relay.id))).toMatchObject({ payTo: solana, amount: "100000", extra: { rehearsal: true } });
      const { body, settle } = await paidRehearsal(buyer, `/c/${relay.id}/test?city=Oslo`);
      expect(body.fulfillment.payload.query).toEqual({ city: "Oslo" });
      expect(body.receipt).toMatchObject({ test_mode: true, network: SOLANA_DEVNET, payer: buyer.address, delivery: { outcome: "delivered", status: 200 } });
      expect(settle).toMatchObject({ success: true, network: SOLANA_DEVNET, transaction: body.receipt.tx_hash });
      expect(await devnet.usdc(buyer.address)).toBe(1_000_000n);
      expect(await devnet.usdc(solana)).toBe(0n);
    });
  });

  it("the facilitator lists the devnet kind with its fee payer; the discovery document names the Solana network", async () => {
    const supported = await call("GET", "/x402/solana/supported");
    expect(supported.status).toBe(200);
    expect(supported.body.kinds).toEqual([{ x402Version: 2, scheme: "exact", network: SOLANA_DEVNET, extra: { feePayer } }]);
    expect(supported.body.signers["solana:*"]).toEqual([feePayer]);
    const root = (await call("GET", "/")).body;
    expect(root.buying.live_networks).toContain(SOLANA_DEVNET);
    const wellKnown = (await call("GET", "/.well-known/c402")).body;
    expect(wellKnown.x402.rails).toContainEqual({ network: SOLANA_DEVNET, asset: "USDC", testnet: true, settlement: "onchain" });
  });
});
