import { EmbeddedPostgres, migrate } from "@c402/db";
import type { Kysely } from "kysely";
import { fulfillmentMigrations, OriginKeys, RelayDeliveries } from "@c402/fulfillment";
import { createGuardedFetch, type GuardedFetch } from "@c402/outbound-http";
import { generateKeyringText, parseKeyring, SecretSealer } from "@c402/sealed-secrets";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { encodeHeader, signExactEvmPayment, syntheticTxHash, type PaymentRequirements } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { paymentsMigrations } from "../src";
import { authorizationKey, evmPresentedPayment, newPaymentRow } from "../src/domain/payment-row";
import { Payments } from "../src/domain/payments";
import type { CheckoutForPayment } from "../src/domain/requirements";
import { PaidOnDelivery, type DeliveryRecord, type OriginDelivery } from "../src/domain/settlement/paid-on-delivery";
import { RehearsalSettlement } from "../src/domain/settlement/rehearsal";
import { decodePayment, evmPayloadOf } from "../src/domain/verify-payment";
import { paymentsStore, type PaymentsDb } from "../src/store/payments-store";

/**
 * The rehearsal face of a relay checkout left unfinished by a crash or a
 * timeout (the live face's kill -9 runs are relay-crash.test.ts): a claim is
 * its buyer's request's to finish; once that request can no longer be
 * answered, the sweep releases it, whatever fulfillment recorded, so nothing
 * is ever settled behind a buyer who was told it failed (ADR 9). On one
 * database with the real fulfillment domain (its own schema) and a real
 * origin on loopback, joined in-process instead of over gRPC.
 */
describe("relay rehearsals left unfinished: released once their buyer stops waiting", () => {
  let pg: EmbeddedPostgres;
  let db: PaymentsDb;
  let origin: FakeOrigin;
  let fetch: GuardedFetch;
  let relay: RelayDeliveries;
  let rehearsal: RehearsalSettlement;
  let payments: Payments;
  let clock = Date.now();
  /** What happens between the origin's answer and payments hearing it (a test makes time pass there). */
  let afterDelivery = () => {};
  const now = () => new Date(clock);
  const SELLER = "0x2222222222222222222222222222222222222222";
  /** How long the claiming request waits in these tests; the sweep leaves a claim alone until then (and the margin). */
  const ANSWER_WITHIN_MS = 45_000;
  let seq = 0;

  const recordOf = (d: Awaited<ReturnType<RelayDeliveries["deliver"]>>): DeliveryRecord => ({
    outcome: d.outcome ?? "origin_failed",
    charged: d.charged,
    status: d.status,
    contentType: d.content_type,
    body: d.body ?? Buffer.alloc(0),
    latencyMs: d.latency_ms,
    bytes: d.bytes,
    reason: d.reason,
  });

  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
    const paymentsDb = pg.forSchema("payments");
    const fulfillmentDb = pg.forSchema("fulfillment");
    await migrate(paymentsDb, paymentsMigrations);
    await migrate(fulfillmentDb, fulfillmentMigrations);
    db = paymentsDb.db;
    origin = await startFakeOrigin();
    fetch = createGuardedFetch({ allowLoopback: true, resolve: async () => [] });
    const sealer = new SecretSealer(parseKeyring(generateKeyringText("k1")));
    const fdb = fulfillmentDb.db as ConstructorParameters<typeof OriginKeys>[0]["db"];
    relay = new RelayDeliveries({ db: fdb, sealer, originKeys: new OriginKeys({ db: fdb, sealer }), fetch, now });
    const delivery: OriginDelivery = {
      deliver: async (r) => {
        const answer = recordOf(
          await relay.deliver({
            paymentId: r.paymentId,
            checkoutId: r.checkoutId,
            accountId: r.accountId,
            originUrl: r.origin.url,
            method: r.origin.method,
            oneOffCredential: false,
            params: r.params,
            deadlineMs: r.deadlineMs,
            testMode: r.testMode,
            testDeliveryDailyCap: r.origin.testDeliveryDailyCap,
          }),
        );
        afterDelivery();
        return answer;
      },
      conclude: async (id) => {
        const d = await relay.conclude(id);
        return d && recordOf(d);
      },
      check: async () => {},
    };
    const paidOnDelivery = new PaidOnDelivery({ db, delivery, settleTimeoutMs: 15_000, now });
    rehearsal = new RehearsalSettlement({ db, subjectSecret: "s", onCommitted: () => {}, now, paidOnDelivery });
    payments = new Payments({ db, checkouts: async (id) => checkoutOf(id), settlements: [rehearsal], now });
  });
  afterAll(async () => {
    await fetch.close();
    await origin.close();
    await pg.close();
  });

  const checkoutsById = new Map<string, CheckoutForPayment>();
  const checkoutOf = (id: string) => checkoutsById.get(id) as CheckoutForPayment;
  function relayCheckout(): CheckoutForPayment {
    const id = `chk_sweep${++seq}`;
    const c: CheckoutForPayment = {
      id,
      accountId: "acct_sweep",
      title: "Relay",
      priceAtomic: 100_000n,
      payTo: SELLER,
      armed: false,
      reusable: true,
      status: "open",
      relay: { url: `${origin.url}/echo?run=${id}`, method: "GET", oneOffCredential: false, testDeliveryDailyCap: 25 },
    };
    checkoutsById.set(id, c);
    return c;
  }

  /** A rehearsal payment claimed as the settlement claims it, and left there (its process died). */
  async function claimed(c: CheckoutForPayment) {
    const { accepts } = await payments.quote(c.id, "test");
    const requirement = accepts[0] as PaymentRequirements;
    const header = encodeHeader(await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), requirement));
    const payload = evmPayloadOf(decodePayment(header));
    const key = authorizationKey(true, requirement, payload);
    const row = newPaymentRow({
      checkout: c,
      presented: evmPresentedPayment(true, c, requirement, payload),
      subjectSecret: "s",
      now: now(),
      handoffId: null,
      answerBy: new Date(clock + ANSWER_WITHIN_MS),
      saga: {
        status: "claimed",
        test_mode: true,
        tx_hash: syntheticTxHash(requirement.network, key.payer as `0x${string}`, key.nonce),
        settled_at: null,
        split_address: null,
        single_shot: false,
      },
    });
    expect(await paymentsStore.insertIfNew(db, row)).toBe(true);
    return { row, header };
  }
  const calls = (c: CheckoutForPayment) => origin.calls.filter((call) => call.query.run === c.id).length;
  const events = async (paymentId: string) => (await (db as Kysely<any>).selectFrom("outbox").select("seq").where("key", "=", paymentId).execute()).length;
  /** The sweep once the claiming request can no longer be answered (its wait and the margin past). */
  const sweepLater = async () => {
    clock += ANSWER_WITHIN_MS + 4_000;
    return rehearsal.sweep();
  };
  const deliveryOf = (c: CheckoutForPayment, paymentId: string) => ({
    paymentId,
    checkoutId: c.id,
    accountId: c.accountId,
    originUrl: c.relay!.url,
    method: "GET",
    oneOffCredential: false,
    params: {},
    testMode: true,
    testDeliveryDailyCap: 25,
  });

  it("a claim whose buyer may still be waiting is left alone by the sweep, even with a charged delivery recorded", async () => {
    const c = relayCheckout();
    const { row } = await claimed(c);
    await relay.deliver({ ...deliveryOf(c, row.id), deadlineMs: 5_000 });
    // Quiet long enough for the sweep to look at it (30 s), its buyer's request still waiting.
    clock += ANSWER_WITHIN_MS - 5_000;
    expect(await rehearsal.sweep()).toBeGreaterThanOrEqual(1);
    expect(await paymentsStore.findById(db, row.id)).toMatchObject({ status: "claimed" });
    expect(await events(row.id)).toBe(0);
  });

  it("a delivery fulfillment recorded after the buyer stopped waiting is never settled: released, and the payment presented again is delivered and settled once", async () => {
    const c = relayCheckout();
    const { row, header } = await claimed(c);
    const d = await relay.deliver({ ...deliveryOf(c, row.id), deadlineMs: 5_000 });
    expect(d.outcome).toBe("delivered");
    expect(await sweepLater()).toBeGreaterThanOrEqual(1);
    expect(await paymentsStore.findById(db, row.id)).toBeUndefined();
    expect(await events(row.id)).toBe(0);
    const again = await payments.submit(c.id, "test", header);
    expect(again).toMatchObject({ status: "settled", redelivered: false, delivery: { outcome: "delivered", status: 200 } });
    // A fresh claim calls the origin afresh: the first answer never reached the buyer.
    expect(calls(c)).toBe(2);
    expect(await events(again.receipt.id)).toBe(1);
  });

  it("a claim whose delivery never started is released (nothing sold), and the same payment presented again is delivered then", async () => {
    const c = relayCheckout();
    const { row, header } = await claimed(c);
    await sweepLater();
    expect(await paymentsStore.findById(db, row.id)).toBeUndefined();
    expect(calls(c)).toBe(0);
    const paid = await payments.submit(c.id, "test", header);
    expect(paid).toMatchObject({ status: "settled", redelivered: false, delivery: { outcome: "delivered" } });
    expect(calls(c)).toBe(1);
  });

  it("a delivered rehearsal its request did not settle is released by the sweep, not settled", async () => {
    const c = relayCheckout();
    const { row } = await claimed(c);
    await paymentsStore.advance(db, row.id, ["claimed"], {
      status: "delivered",
      delivery_outcome: "delivered",
      delivery_status: 200,
      delivery_latency_ms: 3,
      delivery_bytes: 10,
    });
    await sweepLater();
    expect(await paymentsStore.findById(db, row.id)).toBeUndefined();
    expect(await events(row.id)).toBe(0);
  });

  it("an origin answer that comes too late to settle before the buyer stops waiting is not charged, and the claim goes", async () => {
    const c = relayCheckout();
    const { accepts } = await payments.quote(c.id, "test");
    const header = encodeHeader(await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), accepts[0] as PaymentRequirements));
    // The buyer's request waits 25 s; the origin answers, but 8 s pass meanwhile (a stalled hop back): 15 s of settlement wait no longer fit.
    afterDelivery = () => void (clock += 8_000);
    try {
      await expect(payments.submit(c.id, "test", header, { answerBy: new Date(clock + 25_000) })).rejects.toMatchObject({
        slug: "upstream-failed",
        extensions: expect.objectContaining({ charged: false, reason: "timeout" }),
      });
    } finally {
      afterDelivery = () => {};
    }
    expect(calls(c)).toBe(1);
    expect(await db.selectFrom("payments").select("id").where("checkout_id", "=", c.id).execute()).toEqual([]);
  });
});
