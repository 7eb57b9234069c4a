import { Keypair } from "@stellar/stellar-sdk";
import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { createEd25519Signer } from "@x402/stellar";
import { ExactStellarScheme } from "@x402/stellar/exact/client";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { baseUrl, call, decoded, newCheckout, newSeller } from "../src/http";
import { STELLAR_ENABLED, STELLAR_TESTNET, stellarStandin, TESTNET_USDC, type StellarStandinClient } from "../src/stellar";

/**
 * Live settlement on Stellar (docs/adr/0017-stellar-rail.md) with the official
 * clients, unmodified: `@x402/fetch` with the `@x402/stellar` exact client,
 * which signs a Soroban authorization of one USDC transfer; the service submits
 * it and pays the fee. Against the target's Soroban RPC stand-in (no Stellar
 * network runs here): what a public testnet would add is named in the README.
 * USDC has 7 decimals on Stellar: $0.10 is 1,000,000 units there, 100,000 on the receipt.
 */
const describeStellar = STELLAR_ENABLED ? describe : describe.skip;

describeStellar("purchases on Stellar (the stand-in, as stellar:testnet) with the official @x402/stellar client", () => {
  let standin: StellarStandinClient;

  beforeAll(async () => {
    standin = await stellarStandin();
  });

  /** A seller whose standing Stellar wallet (an account with an empty USDC trustline) the checkout copies as a payout rail. */
  async function stellarSeller() {
    const seller = await newSeller();
    const wallet = Keypair.random().publicKey();
    await standin.fundWithUsdc(wallet, 0n);
    const put = await call("PUT", "/v1/account/wallets", { key: seller.key, body: { stellar: wallet } });
    expect(put.status).toBe(200);
    return { seller, stellar: wallet };
  }

  async function stellarCheckout(body: Record<string, unknown> = {}) {
    const { seller, stellar } = await stellarSeller();
    const checkout = await newCheckout(seller.key, { title: "Stellar weather", price_usd: "0.10", payload: { temp_c: 19 }, test_mode: false, ...body });
    return { seller, stellar, checkout };
  }

  /** A buyer holding 1 USDC (10,000,000 units) on the stand-in. */
  async function fundedBuyer(): Promise<Keypair> {
    const buyer = Keypair.random();
    await standin.fundWithUsdc(buyer.publicKey(), 10_000_000n);
    return buyer;
  }

  /**
   * The official client, able to pay on Stellar only (so it picks the Stellar requirement). @x402/core 2.27's
   * spend controls allow only assets a scheme names as defaults, and @x402/stellar 2.9 names none: the buyer
   * lists Stellar's USDC with a cap of its own (1 USDC, in 7 decimals), as the README shows.
   */
  function stellarClient(buyer: Keypair) {
    return new x402Client()
      .register("stellar:*", new ExactStellarScheme(createEd25519Signer(buyer.secret(), STELLAR_TESTNET), { url: standin.url }))
      .setSpendControls({ allowedAssets: [{ network: STELLAR_TESTNET, asset: TESTNET_USDC, maxAmountPerPayment: "10000000" }] });
  }

  async function paymentRequired(path: string): Promise<PaymentRequired> {
    const quote = await call("GET", path);
    expect(quote.status).toBe(402);
    return decoded(quote.headers.get("payment-required")) as PaymentRequired;
  }

  const stellarOf = (required: PaymentRequired) => required.accepts.find((a) => a.network.startsWith("stellar:"));

  /** The PAYMENT-SIGNATURE header of the official client's payment for `signedFor`, presented as paying `accepted`. */
  async function signed(buyer: Keypair, required: PaymentRequired, accepted: PaymentRequirements, signedFor = accepted): Promise<string> {
    const payload = await new ExactStellarScheme(createEd25519Signer(buyer.secret(), STELLAR_TESTNET), { url: standin.url }).createPaymentPayload(2, signedFor);
    return encodePaymentSignatureHeader({ ...payload, x402Version: 2, accepted, resource: required.resource });
  }

  /** Pays `path` with the official client in one round trip; the signed payment headers it sent, the answer and its settlement header. */
  async function pay(buyer: Keypair, path: string) {
    const signatures: string[] = [];
    const counting: typeof fetch = async (input, init) => {
      const req = new Request(input, init);
      if (req.headers.get("payment-signature")) signatures.push(req.headers.get("payment-signature") as string);
      return fetch(req);
    };
    const res = await wrapFetchWithPayment(counting, stellarClient(buyer))(`${baseUrl()}${path}`, { headers: { accept: "application/json" } });
    const text = await res.text();
    expect([res.status, res.status === 200 ? "" : text]).toEqual([200, ""]);
    expect(signatures).toHaveLength(1);
    const body = JSON.parse(text) as { fulfillment: Record<string, unknown>; receipt: Record<string, unknown> };
    return { body, signature: signatures[0] as string, settle: decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE") as string) };
  }

  it("a checkout does not take a Stellar payout wallet without its USDC trustline: 422 payout-account-missing, nothing created; with it the same create succeeds", async () => {
    const seller = await newSeller();
    const wallet = Keypair.random().publicKey();
    // An account with XLM and no USDC trustline: registering it is never refused, a checkout taking it is.
    await standin.rpc("standin_fundAccount", { accountId: wallet, stroops: "100000000000" });
    expect((await call("PUT", "/v1/account/wallets", { key: seller.key, body: { stellar: wallet } })).status).toBe(200);
    const body = { title: "Paid in USDC on Stellar", price_usd: "0.25", payload: "goods", test_mode: false };
    const refused = await call("POST", "/v1/checkouts", { key: seller.key, body });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      type: expect.stringMatching(/\/problems\/payout-account-missing$/),
      status: 422,
      chain: "stellar",
      address: wallet,
      network: STELLAR_TESTNET,
      asset: expect.stringMatching(/^USDC:G[A-Z2-7]{55}$/),
      help: { retry_is_safe: false },
    });
    expect(refused.body.help.fix).toContain("trustline");
    expect(refused.body.token_account).toBeUndefined();
    expect((await call("GET", "/v1/checkouts", { key: seller.key })).body.checkouts).toEqual([]);

    await standin.fundWithUsdc(wallet, 0n);
    const created = await call("POST", "/v1/checkouts", { key: seller.key, body });
    expect(created.status).toBe(201);
    expect(created.body.payouts).toContainEqual({ chain: "stellar", address: wallet, offered: true });
  });

  it("the facilitator lists stellar:testnet with areFeesSponsored, and /health/facilitator says Stellar settles live", async () => {
    const supported = await call("GET", "/x402/stellar/supported");
    expect(supported.status).toBe(200);
    expect(supported.body.kinds).toEqual([{ x402Version: 2, scheme: "exact", network: STELLAR_TESTNET, extra: { areFeesSponsored: true } }]);
    expect(supported.body.signers["stellar:*"]).toEqual([expect.stringMatching(/^G[A-Z2-7]{55}$/)]);
    const health = await call("GET", "/health/facilitator");
    expect(health.body.chains.stellar).toEqual({ networks: [STELLAR_TESTNET], available: true, settles: "live", reason: null });
  });

  it("lists a Stellar requirement on the live face: USDC's contract, the price in 7 decimals, to the seller's account, fees sponsored", async () => {
    const { stellar, checkout } = await stellarCheckout();
    const required = await paymentRequired(`/c/${checkout.id}`);
    expect(required.accepts.map((a) => a.network)).toContain(STELLAR_TESTNET);
    expect(stellarOf(required)).toEqual({
      scheme: "exact",
      network: STELLAR_TESTNET,
      asset: TESTNET_USDC,
      amount: "1000000",
      payTo: stellar,
      maxTimeoutSeconds: 300,
      extra: { areFeesSponsored: true, checkoutId: checkout.id },
      resource: `${baseUrl()}/c/${checkout.id}`,
    });
    // x402 v1 has no name for a Stellar network: the legacy form leaves the rail out.
    const v1 = await call("GET", `/c/${checkout.id}?x402_version=1`);
    expect(v1.body.accepts.map((a: { network: string }) => a.network)).not.toContain(expect.stringMatching(/stellar/));
  });

  it("the official client pays the live face in one round trip: goods, PAYMENT-RESPONSE, receipt; one transfer of the price on the ledger", async () => {
    const { stellar, checkout, seller } = await stellarCheckout();
    const buyer = await fundedBuyer();
    const before = (await standin.transfers()).length;
    const { body, settle, signature } = await pay(buyer, `/c/${checkout.id}`);
    expect(body.fulfillment.payload).toEqual({ temp_c: 19 });
    expect(body.receipt).toMatchObject({
      test_mode: false,
      network: STELLAR_TESTNET,
      provider_amount: 100_000,
      fee_amount: 0,
      platform_amount: null,
      total: 100_000,
      pay_to: stellar,
      payer: buyer.publicKey(),
    });
    expect(settle).toMatchObject({ success: true, network: STELLAR_TESTNET, payer: buyer.publicKey(), transaction: body.receipt.tx_hash });
    expect(settle.transaction).toMatch(/^[0-9a-f]{64}$/);

    // Exactly one transfer, the receipt's: the price, buyer to seller, in the transaction the receipt names.
    const made = (await standin.transfers()).slice(before).filter((t) => t.from === buyer.publicKey() || t.to === stellar);
    expect(made).toEqual([{ hash: settle.transaction, ledger: expect.any(Number), from: buyer.publicKey(), to: stellar, amount: 1_000_000n }]);
    expect(await standin.usdc(buyer.publicKey())).toBe(10_000_000n - 1_000_000n);
    expect(await standin.usdc(stellar)).toBe(1_000_000n);

    const receipt = await call("GET", `/r/${body.receipt.id}`);
    expect(receipt.body).toMatchObject({ id: body.receipt.id, network: STELLAR_TESTNET, tx_hash: settle.transaction, total: 100_000, pay_to: stellar });

    // The same payment again redelivers the same receipt; nothing moves twice.
    const again = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": signature } });
    expect([again.status, again.body.receipt?.id]).toEqual([200, body.receipt.id]);
    expect(await standin.usdc(buyer.publicKey())).toBe(10_000_000n - 1_000_000n);

    // A single-shot checkout becomes paid and stops selling.
    let status = "";
    for (let i = 0; i < 100 && status !== "paid"; i++) {
      status = (await call("GET", `/v1/checkouts/${checkout.id}`, { key: seller.key })).body.status;
      if (status !== "paid") await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe("paid");
  });

  it("a payment whose amount was changed after signing is refused with nothing sent or moved", async () => {
    const { stellar, checkout } = await stellarCheckout({ reusable: true });
    const buyer = await fundedBuyer();
    const required = await paymentRequired(`/c/${checkout.id}`);
    const requirement = stellarOf(required)!;
    // The buyer signs for a tenth of the price, and presents it as the issued requirement.
    const header = await signed(buyer, required, requirement, { ...requirement, amount: "100000" });
    const refused = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(refused.status).toBe(402);
    expect(refused.body.reason).toMatch(/^invalid_exact_stellar_/);
    // The hint says how to pay on Stellar, not the EVM /prepare route.
    expect(refused.body.help.prepare).toMatch(/x402 Stellar client/);
    expect(await standin.usdc(buyer.publicKey())).toBe(10_000_000n);
    expect(await standin.usdc(stellar)).toBe(0n);
  });

  it("/x402/stellar/verify and /settle take the official client's payment for a requirement this service issued: one transfer, the checkout's sale; a forged one is refused", async () => {
    const { stellar, checkout } = await stellarCheckout({ reusable: true });
    const buyer = await fundedBuyer();
    const required = await paymentRequired(`/c/${checkout.id}`);
    const requirement = stellarOf(required)!;
    const payload = await new ExactStellarScheme(createEd25519Signer(buyer.secret(), STELLAR_TESTNET), { url: standin.url }).createPaymentPayload(
      2,
      requirement,
    );
    const presented = { ...payload, x402Version: 2, accepted: requirement, resource: required.resource };

    // A requirement this service never issued (another payee) is refused before anything is checked or sent.
    const forged = { ...requirement, payTo: Keypair.random().publicKey() };
    const refused = await call("POST", "/x402/stellar/settle", {
      body: { network: STELLAR_TESTNET, requirement: forged, payload: { ...presented, accepted: forged } },
    });
    expect(refused.body).toMatchObject({ success: false, errorReason: "invalid_payment_requirements", transaction: "" });

    const body = { network: STELLAR_TESTNET, requirement, payload: presented };
    expect((await call("POST", "/x402/stellar/verify", { body })).body).toEqual({ isValid: true, payer: buyer.publicKey() });
    const settled = await call("POST", "/x402/stellar/settle", { body });
    expect(settled.body).toMatchObject({
      success: true,
      network: STELLAR_TESTNET,
      payer: buyer.publicKey(),
      transaction: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(await standin.usdc(stellar)).toBe(1_000_000n);
    // Settled again: the same transaction, nothing moves twice.
    expect((await call("POST", "/x402/stellar/settle", { body })).body).toMatchObject({ success: true, transaction: settled.body.transaction });
    expect(await standin.usdc(buyer.publicKey())).toBe(10_000_000n - 1_000_000n);
  });

  it("the rehearsal face quotes stellar:testnet and settles the official client's payment simulated: a test receipt, nothing moves", async () => {
    const { stellar, checkout } = await stellarCheckout({ test_mode: true });
    const buyer = await fundedBuyer();
    const required = await paymentRequired(`/c/${checkout.id}/test`);
    expect(stellarOf(required)).toMatchObject({
      network: STELLAR_TESTNET,
      asset: TESTNET_USDC,
      amount: "1000000",
      payTo: stellar,
      extra: { areFeesSponsored: true, rehearsal: true, checkoutId: checkout.id },
      resource: `${baseUrl()}/c/${checkout.id}/test`,
    });
    const before = (await standin.transfers()).length;
    const { body, settle } = await pay(buyer, `/c/${checkout.id}/test`);
    expect(body.fulfillment.payload).toEqual({ temp_c: 19 });
    expect(body.receipt).toMatchObject({ test_mode: true, network: STELLAR_TESTNET, total: 100_000, pay_to: stellar, payer: buyer.publicKey() });
    expect(settle).toMatchObject({ success: true, network: STELLAR_TESTNET });
    expect((await standin.transfers()).length).toBe(before);
    expect(await standin.usdc(buyer.publicKey())).toBe(10_000_000n);
  });

  describe("a relay checkout on Stellar: paid only on delivery, inside the authorization's life", () => {
    let origin: FakeOrigin;
    beforeAll(async () => {
      origin = await startFakeOrigin();
    });
    afterAll(async () => {
      await origin?.close();
    });

    const relayCheckout = (path: string, body: Record<string, unknown> = {}) =>
      stellarCheckout({ title: `Relay ${path}`, payload: undefined, origin_url: `${origin.url}${path}`, reusable: true, ...body });

    it("live: the origin's answer is delivered with the receipt, and the price moves once", async () => {
      const { stellar, checkout } = await relayCheckout("/echo");
      const buyer = await fundedBuyer();
      const { body, settle } = await pay(buyer, `/c/${checkout.id}?city=Lisbon`);
      expect(body.fulfillment).toMatchObject({ mode: "relay", origin_status: 200, payload: { method: "GET", query: { city: "Lisbon" } } });
      expect(body.receipt).toMatchObject({ test_mode: false, network: STELLAR_TESTNET, total: 100_000, pay_to: stellar, tx_hash: settle.transaction });
      expect(await standin.usdc(stellar)).toBe(1_000_000n);
    });

    it("live: an origin that fails is not paid for; nothing moves", async () => {
      const { stellar, checkout } = await relayCheckout("/status/503");
      const buyer = await fundedBuyer();
      const required = await paymentRequired(`/c/${checkout.id}`);
      const failed = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": await signed(buyer, required, stellarOf(required)!) } });
      expect(failed.status).toBe(502);
      expect(failed.body.type).toMatch(/\/problems\/upstream-failed$/);
      expect(failed.headers.get("payment-response")).toBeNull();
      expect(await standin.usdc(buyer.publicKey())).toBe(10_000_000n);
      expect(await standin.usdc(stellar)).toBe(0n);
    });

    it("rehearsal: the origin delivers, then the rehearsal settles simulated; nothing moves", async () => {
      const { stellar, checkout } = await relayCheckout("/echo", { test_mode: true });
      const buyer = await fundedBuyer();
      const { body } = await pay(buyer, `/c/${checkout.id}/test?city=Oslo`);
      expect(body.fulfillment).toMatchObject({ mode: "relay", origin_status: 200, payload: { query: { city: "Oslo" } } });
      expect(body.receipt).toMatchObject({ test_mode: true, network: STELLAR_TESTNET, pay_to: stellar });
      expect(await standin.usdc(buyer.publicKey())).toBe(10_000_000n);
    });
  });
});
