import { resolve } from "node:path";
import { migrate, sql, type ServiceDatabase } from "@c402/db";
import type { FailpointName } from "@c402/failpoints";
import { newId } from "@c402/ids";
import { payerAuthEntry, type StellarChain } from "@c402/stellar-chain";
import { refuseStellarOrgLookups, startStellarStandin, trustCertificateInThisProcess, type StellarStandin } from "@c402/stellar-standin";
import { describeWith, freshPostgresDatabase, infraAvailable, runScriptProcess } from "@c402/testkit";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import type { AnyPaymentPayload, PaymentRequirements } from "@c402/x402";
import { Keypair } from "@stellar/stellar-sdk";
import { createEd25519Signer } from "@x402/stellar";
import { ExactStellarScheme } from "@x402/stellar/exact/client";
import { paymentsMigrations } from "../src";
import { requirementsFor, type CheckoutForPayment } from "../src/domain/requirements";
import { LiveStellarSettlement } from "../src/domain/settlement/live-stellar";
import type { SettlementOutcome } from "../src/domain/settlement/settlement";
import { startFulfillmentRig, type FulfillmentRig } from "./support/fulfillment-rig";
import { type StellarRelaySagaConfig, type StellarRelaySagaInput } from "./support/stellar-relay-saga";
import { openStellarSaga } from "./support/stellar-saga";

/**
 * Relay sales on Stellar (ADR 17, paid only on delivery as ADR 9 says):
 * the official @x402/stellar client pays a relay checkout against the
 * Soroban RPC stand-in (no Stellar network runs here), fulfillment (a real
 * gRPC service on PostgreSQL) calls a real HTTP origin on loopback, and only
 * an answer the charge table charges is settled, within the time the buyer's
 * authorization leaves: its signature expiration ledger, converted to a time
 * from the latest ledger's close time at the chain's ledger time.
 */
const DRIVER = resolve(__dirname, "fixtures/stellar-relay-process.ts");
/** The stand-in closes a ledger every 2 s; the chain counts 2 s a ledger. The official client, asking no Horizon, counts 5 s: its 300 s are 60 ledgers, 120 s here. */
const LEDGER_MS = 2_000;
const PRICE = 250_000n; // $0.25 in the service's 6 decimals; 2,500,000 units of Stellar's 7
const UNITS = 2_500_000n;
const BUYER_UNITS = 10_000_000n;
const SETTLE_TIMEOUT_MS = 10_000;
const kafkaBrokers = infraAvailable("kafka");
const describeOnInfra = kafkaBrokers ? describeWith("postgres") : describe.skip;

describeOnInfra("relay sales on Stellar: paid only on delivery (PostgreSQL, Kafka, Soroban RPC stand-in, fulfillment, a real origin)", () => {
  let standin: StellarStandin;
  let untrust: () => void;
  let horizon: ReturnType<typeof refuseStellarOrgLookups>;
  let postgres: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let database: ServiceDatabase;
  let origin: FakeOrigin;
  let fulfillment: FulfillmentRig;
  let config: StellarRelaySagaConfig;
  let opened: Awaited<ReturnType<typeof openStellarSaga>>;
  let saga: LiveStellarSettlement;
  let chain: StellarChain;

  beforeAll(async () => {
    standin = await startStellarStandin({ ledgerMs: LEDGER_MS });
    untrust = trustCertificateInThisProcess(standin.caCertificatePem);
    horizon = refuseStellarOrgLookups();
    postgres = await freshPostgresDatabase();
    origin = await startFakeOrigin();
    fulfillment = await startFulfillmentRig(postgres.url, kafkaBrokers!, "stellar-relay-fulfillment");
    const service = Keypair.random();
    standin.fundAccount(service.publicKey());
    config = {
      databaseUrl: postgres.url,
      rpcUrl: standin.url,
      caCertificatePem: standin.caCertificatePem,
      network: standin.network,
      usdcContract: standin.usdc,
      accountSecret: service.secret(),
      ledgerSeconds: LEDGER_MS / 1000,
      pollIntervalMs: 200,
      subjectSecret: "stellar-relay",
      settleTimeoutMs: SETTLE_TIMEOUT_MS,
      fulfillmentAddress: fulfillment.address,
    };
    opened = await openStellarSaga(config);
    ({ saga, chain, database } = opened);
    await migrate(database, paymentsMigrations);
  }, 120_000);

  afterAll(async () => {
    await opened?.close();
    await fulfillment?.close();
    await origin?.close();
    await postgres?.drop();
    horizon?.restore();
    untrust?.();
    await standin?.close();
  });

  /** A funded buyer, a seller with a USDC trustline, and a relay checkout of the seller's origin at `path` (tagged with its own run). */
  function relaySale(path = "/echo", over: Partial<CheckoutForPayment> = {}) {
    const buyer = Keypair.random();
    const seller = Keypair.random();
    standin.fundAccount(buyer.publicKey());
    standin.fundAccount(seller.publicKey());
    standin.mintUsdc(buyer.publicKey(), BUYER_UNITS);
    standin.mintUsdc(seller.publicKey(), 0n);
    const run = newId("checkout");
    const checkout: CheckoutForPayment = {
      id: run,
      accountId: "acc_stellar_relay",
      title: "Stellar relay",
      priceAtomic: PRICE,
      payTo: "0x2222222222222222222222222222222222222222",
      armed: true,
      reusable: true,
      status: "open",
      payoutAddresses: { stellar: seller.publicKey() },
      relay: { url: `${origin.url}${path}?run=${run}`, method: "GET", oneOffCredential: false, testDeliveryDailyCap: 25 },
      ...over,
    };
    const requirement = requirementsFor("live", checkout, saga.rails()).find((r) => r.network === standin.network);
    if (!requirement) throw new Error("no Stellar requirement quoted for the relay checkout");
    const originCalls = () => origin.calls.filter((c) => c.query.run === run).length;
    return { buyer, seller, checkout, requirement, run, originCalls };
  }

  /** What the official client sends for `requirement`, its authorization signed for `maxTimeoutSeconds` (the quote's by default). */
  async function pay(buyer: Keypair, requirement: PaymentRequirements, maxTimeoutSeconds = requirement.maxTimeoutSeconds): Promise<AnyPaymentPayload> {
    const client = new ExactStellarScheme(createEd25519Signer(buyer.secret(), "stellar:testnet"), { url: standin.url });
    const created = await client.createPaymentPayload(2, { ...requirement, maxTimeoutSeconds } as Parameters<typeof client.createPaymentPayload>[1]);
    return { ...created, accepted: requirement, resource: { url: "http://127.0.0.1/c/x", description: "", mimeType: "" } } as unknown as AnyPaymentPayload;
  }

  /** The payer's signature expiration ledger in a payload. */
  const expirationOf = (payload: AnyPaymentPayload) =>
    payerAuthEntry(chain.decode((payload.payload as { transaction: string }).transaction))!.signatureExpirationLedger!;

  async function rowsOf(checkoutId: string) {
    return database.db.selectFrom("payments").selectAll().where("checkout_id", "=", checkoutId).execute();
  }

  async function outboxEventsOf(paymentId: string): Promise<number> {
    const { rows } = await sql<{ n: string }>`select count(*)::text as n from ${sql.table("outbox")} where key = ${paymentId}`.execute(database.db);
    return Number(rows[0]!.n);
  }

  const bodyOf = (outcome: SettlementOutcome) =>
    JSON.parse((outcome as { delivery: { body: Buffer } }).delivery.body.toString("utf8")) as { query: Record<string, string> };

  it("quotes a relay checkout on Stellar only where the delivery step runs, and a checkout with a platform cut never", () => {
    const { checkout, seller, requirement } = relaySale();
    expect(requirement).toMatchObject({ network: standin.network, payTo: seller.publicKey(), amount: UNITS.toString(), extra: { areFeesSponsored: true } });
    // Without fulfillment the origin cannot be called first: no Stellar requirement, so nothing can sell it here.
    const withoutDelivery = new LiveStellarSettlement({
      db: database.db,
      chains: new Map([[chain.network, chain]]),
      subjectSecret: config.subjectSecret,
      settleTimeoutMs: SETTLE_TIMEOUT_MS,
      onCommitted: () => {},
      now: () => new Date(),
    });
    expect(() => requirementsFor("live", checkout, withoutDelivery.rails())).toThrow("No settleable network");
    expect(requirementsFor("live", { ...checkout, relay: undefined }, withoutDelivery.rails())).toEqual([
      expect.objectContaining({ payTo: seller.publicKey() }),
    ]);
    // One transfer cannot carry a cut, relay or not.
    const withCut = { ...checkout, platform: { feeBps: 500, feeTo: "0x3333333333333333333333333333333333333333" } };
    expect(() => requirementsFor("live", withCut, saga.rails())).toThrow("No settleable network");
  });

  it("origin 200: the origin is called first, then one transfer settles; the receipt carries the origin's answer; valid_before is the authorization's", async () => {
    const { buyer, seller, checkout, requirement, run, originCalls } = relaySale();
    const signedAt = Date.now();
    const payload = await pay(buyer, requirement);
    const expiration = expirationOf(payload);
    const transfersBefore = standin.transfers().length;
    const outcome = await saga.submit(checkout, payload, requirement);
    expect(outcome).toMatchObject({ kind: "settled", redelivered: false, delivery: { outcome: "delivered", charged: true, status: 200 } });
    expect(bodyOf(outcome).query).toEqual({ run });
    expect(originCalls()).toBe(1);
    const transfers = standin.transfers().slice(transfersBefore);
    expect(transfers).toEqual([expect.objectContaining({ from: buyer.publicKey(), to: seller.publicKey(), amount: UNITS })]);
    expect(standin.usdcBalance(seller.publicKey())).toBe(UNITS);
    expect(standin.usdcBalance(buyer.publicKey())).toBe(BUYER_UNITS - UNITS);
    const [row] = await rowsOf(checkout.id);
    expect(row).toMatchObject({
      id: outcome.row.id,
      status: "settled",
      fulfillment: "relay",
      delivery_outcome: "delivered",
      delivery_status: 200,
      tx_hash: transfers[0]!.hash,
      provider_amount: PRICE,
      fee_amount: 0n,
      total: PRICE,
    });
    // The client signed 60 ledgers ahead (300 s at its 5 s); at 2 s a ledger that is 118 s after the ledger it signed at
    // closed, to the close of the ledger before its last: never the quote's 300 s, never unbounded.
    expect(expiration).toBeGreaterThan(0);
    const validBefore = Number(row!.valid_before) * 1000;
    expect(validBefore).toBeGreaterThanOrEqual(signedAt - 3_000 + 118_000);
    expect(validBefore).toBeLessThanOrEqual(Date.now() + 118_000);
    expect(await outboxEventsOf(row!.id)).toBe(1);
  }, 60_000);

  it("origin 5xx: not charged, nothing sent, nothing kept; the same payment, once the seller's origin answers, is delivered and charged once", async () => {
    const { buyer, seller, checkout, requirement, run, originCalls } = relaySale("/status/503");
    const payload = await pay(buyer, requirement);
    const transfersBefore = standin.transfers().length;
    await expect(saga.submit(checkout, payload, requirement)).rejects.toMatchObject({
      slug: "upstream-failed",
      extensions: { fault: "seller", charged: false, origin_status: 503 },
      help: { retry_is_safe: true },
    });
    expect(originCalls()).toBe(1);
    expect(await rowsOf(checkout.id)).toEqual([]);
    expect(standin.transfers().length).toBe(transfersBefore);
    expect(standin.usdcBalance(buyer.publicKey())).toBe(BUYER_UNITS);

    // The seller fixes its origin: the same signed payment is a new claim, delivered and settled once.
    const fixed = { ...checkout, relay: { ...checkout.relay!, url: `${origin.url}/echo?run=${run}` } };
    const outcome = await saga.submit(fixed, payload, requirement);
    expect(outcome).toMatchObject({ kind: "settled", redelivered: false, delivery: { status: 200 } });
    expect(originCalls()).toBe(2);
    expect(standin.transfers().length).toBe(transfersBefore + 1);
    expect(standin.usdcBalance(seller.publicKey())).toBe(UNITS);
    expect(await rowsOf(checkout.id)).toMatchObject([{ status: "settled" }]);
  }, 60_000);

  it("the authorization bounds the origin's time: with little of it left, a slow origin times out before it would answer, not charged", async () => {
    // The origin answers after 25 s: inside the 30 s an origin gets at most, so only the authorization's bound stops it.
    const { buyer, checkout, requirement, originCalls } = relaySale("/slow/25000");
    // 80 s at the client's 5 s a ledger: 16 ledgers, 32 s here. The origin gets what is left after the settlement wait
    // (10 s) and its margin (10 s): about 10 s, less the time since the ledger the client signed at closed.
    const payload = await pay(buyer, requirement, 80);
    const transfersBefore = standin.transfers().length;
    const started = Date.now();
    await expect(saga.submit(checkout, payload, requirement)).rejects.toMatchObject({
      slug: "upstream-failed",
      extensions: { reason: "timeout", charged: false },
    });
    const took = Date.now() - started;
    expect(took).toBeGreaterThan(3_000);
    expect(took).toBeLessThan(15_000);
    expect(originCalls()).toBe(1);
    expect(await rowsOf(checkout.id)).toEqual([]);
    expect(standin.transfers().length).toBe(transfersBefore);
    expect(standin.usdcBalance(buyer.publicKey())).toBe(BUYER_UNITS);
  }, 60_000);

  it("an authorization that expires before the origin could answer and the payment settle is refused before the origin is called, nothing kept", async () => {
    const { buyer, checkout, requirement, originCalls } = relaySale();
    // 20 s at the client's 5 s a ledger: 4 ledgers, 8 s here: less than the settlement wait alone.
    const payload = await pay(buyer, requirement, 20);
    await expect(saga.submit(checkout, payload, requirement)).rejects.toMatchObject({
      slug: "payment-required",
      extensions: { reason: "invalid_exact_stellar_signature_expires_too_soon" },
    });
    expect(originCalls()).toBe(0);
    expect(await rowsOf(checkout.id)).toEqual([]);
    expect(standin.usdcBalance(buyer.publicKey())).toBe(BUYER_UNITS);
  }, 60_000);

  it("the same payment presented 5 times at once calls the origin once and settles once; every copy answers the origin's answer", async () => {
    const { buyer, seller, checkout, requirement, run, originCalls } = relaySale();
    const payload = await pay(buyer, requirement);
    const transfersBefore = standin.transfers().length;
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => saga.submit(checkout, payload, requirement)));
    expect(outcomes.map((o) => o.kind)).toEqual(Array(5).fill("settled"));
    expect(new Set(outcomes.map((o) => o.row.id)).size).toBe(1);
    expect(outcomes.filter((o) => o.kind === "settled" && !o.redelivered)).toHaveLength(1);
    for (const outcome of outcomes) expect(bodyOf(outcome).query).toEqual({ run });
    // Presented again later: the recorded answer, nothing called or sent.
    const again = await saga.submit(checkout, payload, requirement);
    expect(again).toMatchObject({ kind: "settled", redelivered: true, delivery: { status: 200 } });
    expect(originCalls()).toBe(1);
    expect(standin.transfers().length).toBe(transfersBefore + 1);
    expect(standin.usdcBalance(seller.publicKey())).toBe(UNITS);
    expect(await rowsOf(checkout.id)).toHaveLength(1);
  }, 60_000);

  /**
   * Killed between the origin's answer and the send (kill -9, a payments
   * process of its own; fulfillment and the origin run on). Before anything
   * is signed the buyer's request died with the process, so nothing may be
   * sent behind it: the claim is released once that request could no longer
   * be answered, and the same payment presented again is a fresh delivery,
   * sent once. Once the settlement is signed and recorded, the sweep sends
   * the recorded transaction (chain first) and the payment presented again
   * answers the delivery fulfillment recorded, the origin never called again.
   */
  describe("killed between the origin's answer and the send", () => {
    /** The buyer's request waits 15 s: the origin gets 15 - 5 (settlement wait) - 3 - 5 = 2 s, and the claim is released 3 s after. */
    const ANSWER_WITHIN_MS = 15_000;
    const RECOVERY_LIMIT_MS = 40_000;

    it.each<FailpointName>(["after-origin-answer", "after-delivery", "after-sign"])(
      "killed %s: never charged behind the buyer's back; recovered, delivered and sent exactly once",
      async (failpoint) => {
        const { buyer, seller, checkout, requirement, run, originCalls } = relaySale();
        const payload = await pay(buyer, requirement);
        const input: StellarRelaySagaInput = {
          ...config,
          settleTimeoutMs: 5_000,
          checkout: { ...checkout, priceAtomic: checkout.priceAtomic.toString() },
          payload,
          requirement,
          answerWithinMs: ANSWER_WITHIN_MS,
        };
        const exit = await runScriptProcess(DRIVER, input, { failpoint, timeoutMs: 60_000 });
        expect({ signal: exit.signal, killedAt: exit.stderr.includes(`failpoint ${failpoint}: SIGKILL`) }).toEqual({ signal: "SIGKILL", killedAt: true });
        expect(originCalls()).toBe(1);
        const [crashed] = await rowsOf(checkout.id);

        if (failpoint === "after-sign") {
          // Recorded and signed, not sent: the sweep sends the recorded transaction and settles it.
          expect(crashed).toMatchObject({ status: "settling", delivery_outcome: "delivered", tx_hash: expect.any(String) });
          await saga.sweep(0);
          const [swept] = await rowsOf(checkout.id);
          expect(swept).toMatchObject({ status: "settled", tx_hash: crashed!.tx_hash });
          expect(standin.transfers().filter((t) => t.from === buyer.publicKey())).toEqual([expect.objectContaining({ hash: crashed!.tx_hash, amount: UNITS })]);
          // Presented again: the receipt with the answer fulfillment recorded; the origin is not called again.
          const again = await saga.submit(checkout, payload, requirement);
          expect(again).toMatchObject({ kind: "settled", redelivered: true, delivery: { outcome: "delivered", status: 200 } });
          expect(bodyOf(again).query).toEqual({ run });
          expect(originCalls()).toBe(1);
        } else {
          expect(crashed).toMatchObject({ status: failpoint === "after-delivery" ? "delivered" : "claimed", tx_hash: null });
          // The sweep leaves the claim to its request until that request can no longer be answered, then releases it.
          const started = Date.now();
          while ((await rowsOf(checkout.id)).length > 0) {
            if (Date.now() - started > RECOVERY_LIMIT_MS) throw new Error(`claim not released in ${RECOVERY_LIMIT_MS} ms`);
            await saga.sweep(0);
            await new Promise((r) => setTimeout(r, 250));
          }
          expect(standin.transfers().filter((t) => t.from === buyer.publicKey())).toEqual([]);
          expect(standin.usdcBalance(buyer.publicKey())).toBe(BUYER_UNITS);
          // Presented again: a fresh delivery, one transfer, one receipt, one event.
          const again = await saga.submit(checkout, payload, requirement);
          expect(again).toMatchObject({ kind: "settled", redelivered: false, delivery: { outcome: "delivered", status: 200 } });
          expect(originCalls()).toBe(2);
        }
        const rows = await rowsOf(checkout.id);
        expect(rows).toMatchObject([{ status: "settled", fulfillment: "relay", delivery_status: 200 }]);
        expect(standin.transfers().filter((t) => t.from === buyer.publicKey())).toEqual([expect.objectContaining({ hash: rows[0]!.tx_hash, amount: UNITS })]);
        expect(standin.usdcBalance(seller.publicKey())).toBe(UNITS);
        expect(standin.usdcBalance(buyer.publicKey())).toBe(BUYER_UNITS - UNITS);
        expect(await outboxEventsOf(rows[0]!.id)).toBe(1);
      },
      120_000,
    );
  });
});
