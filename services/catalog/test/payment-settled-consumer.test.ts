import { create, toBinary } from "@bufbuild/protobuf";
import { DatabaseBus, enqueueEvent, OutboxRelay, outboxMigration } from "@c402/bus";
import { EVENT_TYPES, paymentEventsV1, TOPICS } from "@c402/contracts";
import { EmbeddedPostgres, migrate, type ServiceDatabase } from "@c402/db";
import { eventually } from "@c402/testkit";
import { catalogMigrations } from "../src";
import { Catalog } from "../src/domain/catalog";
import { CATALOG_PAYMENT_CONSUMER, subscribePaymentSettled } from "../src/events/payment-settled-consumer";

const WALLET = "0x1111111111111111111111111111111111111111";

describe("catalog's payment.settled consumer (embedded bus)", () => {
  let pg: EmbeddedPostgres;
  let payments: ServiceDatabase;
  let catalogDb: ServiceDatabase;
  let bus: DatabaseBus;
  let catalog: Catalog;
  let relay: OutboxRelay;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
    payments = pg.forSchema("payments");
    catalogDb = pg.forSchema("catalog");
    await migrate(payments, { "0001_outbox": outboxMigration });
    await migrate(catalogDb, catalogMigrations);
    bus = await DatabaseBus.open(pg.forSchema("bus"));
    catalog = new Catalog({ db: catalogDb.db, payoutWallets: async () => [{ chainFamily: "eip155", address: WALLET, isDefault: true }] });
    relay = new OutboxRelay({ db: payments.db, bus });
    const sub = await subscribePaymentSettled(bus, catalogDb.db);
    stop = () => sub.stop();
  });
  afterAll(async () => {
    await stop();
    await bus.close();
    await pg.close();
  });

  async function checkout(reusable: boolean): Promise<string> {
    const { checkout } = await catalog.create({
      accountId: "acct_a",
      actor: "key:sk_test_abcd",
      fingerprint: `fp_${Math.random()}`,
      title: "Report",
      priceUsd: "0.10",
      offer: {},
      reusable,
      createdWithLiveKey: true,
    });
    return checkout.id;
  }

  /** payment.settled through the outbox and the bus, as payments emits it; `fields` omits what an older producer did not send. */
  async function settle(paymentId: string, checkoutId: string, fields: { testMode: boolean; reusableCheckout?: boolean }): Promise<void> {
    const payload = toBinary(paymentEventsV1.PaymentSettledSchema, create(paymentEventsV1.PaymentSettledSchema, { paymentId, checkoutId, ...fields }));
    await payments.db.transaction().execute((trx) =>
      enqueueEvent(trx, {
        topic: TOPICS.paymentSettled,
        type: EVENT_TYPES.paymentSettled,
        accountId: "acct_a",
        testMode: fields.testMode,
        aggregateId: paymentId,
        payload,
      }),
    );
    expect(await relay.publishBatch()).toBe(1);
  }

  const status = async (id: string) => (await catalog.get(id)).status;
  const processed = async (paymentId: string) =>
    (
      await catalogDb.db
        .selectFrom("processed_events")
        .selectAll()
        .where("consumer", "=", CATALOG_PAYMENT_CONSUMER)
        .where(
          "event_id",
          "in",
          (await payments.db.selectFrom("outbox").select("event_id").where("key", "=", paymentId).execute()).map((r) => r.event_id),
        )
        .execute()
    ).length;

  it("closes a single-shot checkout on its live sale, once, also when the producer did not say whether it was reusable", async () => {
    const id = await checkout(false);
    await settle("pay_single", id, { testMode: false });
    await eventually(
      () => status(id),
      (s) => s === "paid",
      10_000,
    );
    expect(await processed("pay_single")).toBe(1);
  });

  it("skips, without a transaction or a processed row, the sales of reusable checkouts and every rehearsal", async () => {
    const reusable = await checkout(true);
    const single = await checkout(false);
    await settle("pay_reusable", reusable, { testMode: false, reusableCheckout: true });
    await settle("pay_rehearsal", single, { testMode: true, reusableCheckout: false });
    // A later event on the same topic is handled only after these two (the bus delivers in order).
    const marker = await checkout(false);
    await settle("pay_marker", marker, { testMode: false, reusableCheckout: false });
    await eventually(
      () => status(marker),
      (s) => s === "paid",
      10_000,
    );
    expect(await status(reusable)).toBe("open");
    expect(await status(single)).toBe("open");
    expect(await processed("pay_reusable")).toBe(0);
    expect(await processed("pay_rehearsal")).toBe(0);
  });
});
