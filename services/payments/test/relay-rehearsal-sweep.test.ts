import { EmbeddedPostgres, migrate } from "@c402/db";
import type { Kysely } from "kysely";
import { fulfillmentMigrations, OriginKeys, RelayDeliveries } from "@c402/fulfillment";
import { createGuardedFetch, type GuardedFetch } from "@c402/outbound-http";
import { generateKeyringText, parseKeyring, SecretSealer } from "@c402/sealed-secrets";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { encodeHeader, signExactEvmPayment, syntheticTxHash, type PaymentRequirements } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { paymentsMigrations } from "../src";
import { authorizationKey, newPaymentRow } from "../src/domain/payment-row";
import { Payments } from "../src/domain/payments";
import type { CheckoutForPayment } from "../src/domain/requirements";
import { PaidOnDelivery, type DeliveryRecord, type OriginDelivery } from "../src/domain/settlement/paid-on-delivery";
import { RehearsalSettlement } from "../src/domain/settlement/rehearsal";
import { decodePayment } from "../src/domain/verify-payment";
import { paymentsStore, type PaymentsDb } from "../src/store/payments-store";

/**
 * The rehearsal face of a relay checkout left unfinished by a crash (the
 * live face's kill -9 runs are relay-crash.test.ts): the payments sweep
 * carries each claim on from fulfillment's record, on one database with the
 * real fulfillment domain (its own schema) and a real origin on loopback,
 * joined in-process instead of over gRPC.
 */
describe("relay rehearsals resumed by the sweep", () => {
  let pg: EmbeddedPostgres;
  let db: PaymentsDb;
  let origin: FakeOrigin;
  let fetch: GuardedFetch;
  let relay: RelayDeliveries;
  let rehearsal: RehearsalSettlement;
  let payments: Payments;
  let clock = Date.now();
  const now = () => new Date(clock);
  const SELLER = "0x2222222222222222222222222222222222222222";
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
      deliver: async (r) =>
        recordOf(
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
        ),
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
    const payload = decodePayment(header);
    const key = authorizationKey(true, requirement, payload);
    const row = newPaymentRow({
      checkout: c,
      requirement,
      payload,
      subjectSecret: "s",
      now: now(),
      handoffId: null,
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
  const sweepLater = async () => {
    clock += 31_000;
    return rehearsal.sweep();
  };

  it("a delivery fulfillment recorded (payments died before recording it) is settled once, and redelivered without a second call", async () => {
    const c = relayCheckout();
    const { row, header } = await claimed(c);
    const d = await relay.deliver({
      paymentId: row.id,
      checkoutId: c.id,
      accountId: c.accountId,
      originUrl: c.relay!.url,
      method: "GET",
      oneOffCredential: false,
      params: {},
      deadlineMs: 5_000,
      testMode: true,
      testDeliveryDailyCap: 25,
    });
    expect(d.outcome).toBe("delivered");
    expect(await sweepLater()).toBe(1);
    expect(await paymentsStore.findById(db, row.id)).toMatchObject({ status: "settled", delivery_outcome: "delivered", delivery_status: 200 });
    expect(await events(row.id)).toBe(1);
    const again = await payments.submit(c.id, "test", header);
    expect(again).toMatchObject({ status: "settled", redelivered: true, delivery: { outcome: "delivered", status: 200 } });
    expect(calls(c)).toBe(1);
    expect(await events(row.id)).toBe(1);
  });

  it("a claim whose delivery never started is released (nothing sold), and the same payment presented again is delivered then", async () => {
    const c = relayCheckout();
    const { row, header } = await claimed(c);
    await sweepLater();
    expect(await paymentsStore.findById(db, row.id)).toBeUndefined();
    expect(await relay.conclude(row.id)).toMatchObject({ outcome: "abandoned" });
    expect(calls(c)).toBe(0);
    const paid = await payments.submit(c.id, "test", header);
    expect(paid).toMatchObject({ status: "settled", redelivered: false, delivery: { outcome: "delivered" } });
    expect(calls(c)).toBe(1);
  });

  it("a delivered rehearsal not yet settled is settled by the sweep", async () => {
    const c = relayCheckout();
    const { row } = await claimed(c);
    await paymentsStore.advance(db, row.id, ["claimed"], {
      status: "delivered",
      delivery_outcome: "delivered",
      delivery_status: 200,
      delivery_latency_ms: 3,
      delivery_bytes: 10,
    });
    await db.updateTable("payments").set({ updated_at: now() }).where("id", "=", row.id).execute();
    await sweepLater();
    expect(await paymentsStore.findById(db, row.id)).toMatchObject({ status: "settled" });
    expect(await events(row.id)).toBe(1);
  });
});
