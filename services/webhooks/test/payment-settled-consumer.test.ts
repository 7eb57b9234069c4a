import { create, toBinary } from "@bufbuild/protobuf";
import { DatabaseBus, enqueueEvent, KafkaBus, OutboxRelay, outboxMigration, type Bus } from "@c402/bus";
import { EVENT_TYPES, paymentEventsV1, TOPICS } from "@c402/contracts";
import { EmbeddedPostgres, migrate, openPostgres, type ServiceDatabase } from "@c402/db";
import { describeWith, eventually, freshPostgresDatabase, infraAvailable } from "@c402/testkit";
import { webhooksMigrations } from "../src";
import { subscribePaymentSettled } from "../src/events/payment-settled-consumer";
import { webhooksStore } from "../src/store/webhooks-store";

function consumerContract(open: () => Promise<{ emitter: ServiceDatabase; webhooks: ServiceDatabase; bus: Bus; close(): Promise<void> }>) {
  let ctx: Awaited<ReturnType<typeof open>>;
  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.emitter, { "0001_outbox": outboxMigration });
    await migrate(ctx.webhooks, webhooksMigrations);
    await ctx.bus.ensureTopics([TOPICS.paymentSettled]);
  });
  afterAll(() => ctx.close());

  it("records each payment.settled once, even when the bus redelivers it, and goes on past the duplicate", async () => {
    const accountId = `acct_${Date.now()}`;
    const payload = toBinary(
      paymentEventsV1.PaymentSettledSchema,
      create(paymentEventsV1.PaymentSettledSchema, { paymentId: "pay_1", total: 110_500n, testMode: true }),
    );
    await ctx.emitter.db
      .transaction()
      .execute((trx) =>
        enqueueEvent(trx, { topic: TOPICS.paymentSettled, type: EVENT_TYPES.paymentSettled, accountId, testMode: true, aggregateId: "pay_1", payload }),
      );
    const sub = await subscribePaymentSettled(ctx.bus, ctx.webhooks.db);
    const relay = new OutboxRelay({ db: ctx.emitter.db, bus: ctx.bus });
    expect(await relay.publishBatch()).toBe(1);

    // Redeliver the very same message, as a broker may after a consumer crash.
    const row = await ctx.emitter.db.selectFrom("outbox").select(["payload"]).executeTakeFirstOrThrow();
    await ctx.bus.publish(TOPICS.paymentSettled, [{ key: "pay_1", value: new Uint8Array(row.payload) }]);

    // A later event is recorded only once the consumer got past the duplicate (the bus delivers in order).
    await ctx.emitter.db
      .transaction()
      .execute((trx) =>
        enqueueEvent(trx, { topic: TOPICS.paymentSettled, type: EVENT_TYPES.paymentSettled, accountId, testMode: true, aggregateId: "pay_1", payload }),
      );
    expect(await relay.publishBatch()).toBe(1);
    const recorded = await eventually(
      () => webhooksStore.listForAccount(ctx.webhooks.db, accountId),
      (rows) => rows.length >= 2,
      30_000,
    );
    await new Promise((r) => setTimeout(r, 500));
    const after = await webhooksStore.listForAccount(ctx.webhooks.db, accountId);
    expect(after).toHaveLength(2);
    expect(new Set(after.map((r) => r.event_id)).size).toBe(2);
    expect(recorded[0]).toMatchObject({ type: "payment.settled", aggregate_id: "pay_1", test_mode: true });
    await sub.stop();
  });
}

describe("payment.settled consumer on the embedded stack", () => {
  consumerContract(async () => {
    const pg = await EmbeddedPostgres.open();
    const bus = await DatabaseBus.open(pg.forSchema("bus"));
    return {
      emitter: pg.forSchema("payments"),
      webhooks: pg.forSchema("webhooks"),
      bus,
      async close() {
        await bus.close();
        await pg.close();
      },
    };
  });
});

describeWith("postgres")("payment.settled consumer on PostgreSQL and Kafka", () => {
  const kafka = infraAvailable("kafka");
  (kafka ? describe : describe.skip)("with a real broker", () => {
    consumerContract(async () => {
      const fresh = await freshPostgresDatabase();
      const emitter = openPostgres({ url: fresh.url, schema: "payments" });
      const webhooks = openPostgres({ url: fresh.url, schema: "webhooks" });
      const bus = new KafkaBus({ brokers: (kafka as string).split(","), clientId: "webhooks-test" });
      return {
        emitter,
        webhooks,
        bus,
        async close() {
          await bus.close();
          await emitter.close();
          await webhooks.close();
          await fresh.drop();
        },
      };
    });
  });
});
