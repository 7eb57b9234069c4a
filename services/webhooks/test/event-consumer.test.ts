import { randomUUID } from "node:crypto";
import { DatabaseBus, KafkaBus, OutboxRelay, outboxMigration, type Bus, type Subscription } from "@c402/bus";
import { toBinary } from "@bufbuild/protobuf";
import { eventsV1, TOPICS } from "@c402/contracts";
import { EmbeddedPostgres, migrate, openPostgres, type ServiceDatabase } from "@c402/db";
import { describeWith, eventually, freshPostgresDatabase, infraAvailable } from "@c402/testkit";
import { startWebhookReceiver, type WebhookReceiver } from "@c402/testkit/webhook-receiver";
import { webhooksMigrations } from "../src";
import { SOURCE_TOPICS, subscribeWebhookSources } from "../src/events/event-consumer";
import { webhooksStore, type WebhooksDb } from "../src/store/webhooks-store";
import { checkoutReportedEnvelope, escrowEnvelope, paymentSettledEnvelope, scheduleEnvelope, SELLER, webhookRig } from "./webhook-fixtures";

/**
 * From the bus to the receiver, on both buses: payment.settled and
 * checkout.reported written to an emitter's outbox, relayed, consumed,
 * recorded once with their deliveries, and delivered; the same message
 * published again (a broker redelivering after a consumer crash) delivers
 * nothing more, and the consumer goes on past it.
 */
function consumerContract(open: () => Promise<{ emitter: ServiceDatabase; webhooks: ServiceDatabase; bus: Bus; close(): Promise<void> }>) {
  let ctx: Awaited<ReturnType<typeof open>>;
  let receiver: WebhookReceiver;
  let rig: ReturnType<typeof webhookRig>;
  let subscriptions: Subscription[];
  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.emitter, { "0001_outbox": outboxMigration });
    await migrate(ctx.webhooks, webhooksMigrations);
    await ctx.bus.ensureTopics(SOURCE_TOPICS);
    receiver = await startWebhookReceiver();
    rig = webhookRig(ctx.webhooks.db as WebhooksDb);
    await rig.keys.ensure();
    rig.dispatcher.start();
    subscriptions = await subscribeWebhookSources(ctx.bus, rig.dispatcher);
  });
  afterAll(async () => {
    await Promise.all(subscriptions.map((s) => s.stop()));
    await rig.dispatcher.stop();
    await rig.fetch.close();
    await receiver.close();
    await ctx.close();
  });

  it("delivers each sale and report once, even when the bus redelivers it", async () => {
    const accountId = `acct_${Date.now()}`;
    await rig.endpoints.register({ ...SELLER, accountId, url: `${receiver.url}/hook`, events: ["checkout.paid", "checkout.reported"] });
    const sale = paymentSettledEnvelope(accountId, { testMode: true });
    const report = checkoutReportedEnvelope(accountId);
    const write = (topic: string, envelope: typeof sale) =>
      ctx.emitter.db
        .insertInto("outbox" as never)
        .values({
          event_id: envelope.eventId,
          topic,
          key: envelope.aggregateId,
          payload: Buffer.from(toBinary(eventsV1.EventEnvelopeSchema, envelope)),
        } as never)
        .execute();
    await write(TOPICS.paymentSettled, sale);
    await write(TOPICS.checkoutReported, report);
    const relay = new OutboxRelay({ db: ctx.emitter.db, bus: ctx.bus });
    expect(await relay.publishBatch()).toBe(2);
    const got = await receiver.waitFor(2, 30_000);
    expect(got.map((r) => JSON.parse(r.rawBody).event).sort()).toEqual(["checkout.paid", "checkout.reported"]);
    expect(JSON.parse(got.find((r) => r.rawBody.includes("checkout.paid"))!.rawBody).data).toMatchObject({ payment_id: sale.aggregateId, test_mode: true });

    // The very same message again, then a later sale: only the later one is delivered.
    await ctx.bus.publish(TOPICS.paymentSettled, [{ key: sale.aggregateId, value: toBinary(eventsV1.EventEnvelopeSchema, sale) }]);
    const later = paymentSettledEnvelope(accountId);
    await write(TOPICS.paymentSettled, later);
    expect(await relay.publishBatch()).toBe(1);
    await receiver.waitFor(3, 30_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received).toHaveLength(3);
    expect(JSON.parse(receiver.received[2]!.rawBody).data.payment_id).toBe(later.aggregateId);
    const recorded = await eventually(
      () => webhooksStore.listForAccount(ctx.webhooks.db as WebhooksDb, accountId),
      (rows) => rows.length === 3,
    );
    expect(new Set(recorded.map((r) => r.event_id)).size).toBe(3);
  });

  it("delivers the escrow events a receiver subscribed to, each once, with the escrow and its handoff id", async () => {
    const accountId = `acct_esc_${Date.now()}`;
    const hook = await startWebhookReceiver();
    try {
      await rig.endpoints.register({ ...SELLER, accountId, url: `${hook.url}/hook`, events: ["escrow.escalated", "escrow.released"] });
      const paymentId = `pay_esc_${Date.now()}`;
      const events = (["held", "escalated", "released"] as const).map((type) => escrowEnvelope(accountId, type, { paymentId }));
      for (const envelope of events) {
        await ctx.emitter.db
          .insertInto("outbox" as never)
          .values({
            event_id: envelope.eventId,
            topic: TOPICS.escrowEvents,
            key: paymentId,
            payload: Buffer.from(toBinary(eventsV1.EventEnvelopeSchema, envelope)),
          } as never)
          .execute();
      }
      const relay = new OutboxRelay({ db: ctx.emitter.db, bus: ctx.bus });
      expect(await relay.publishBatch()).toBe(3);
      // The broker redelivering the escalation delivers nothing more.
      await ctx.bus.publish(TOPICS.escrowEvents, [{ key: paymentId, value: toBinary(eventsV1.EventEnvelopeSchema, events[1]!) }]);
      await hook.waitFor(2, 30_000);
      await new Promise((r) => setTimeout(r, 500));
      expect(hook.received).toHaveLength(2);
      const byEvent = Object.fromEntries(hook.received.map((r) => [JSON.parse(r.rawBody).event, JSON.parse(r.rawBody).data]));
      expect(Object.keys(byEvent).sort()).toEqual(["escrow.escalated", "escrow.released"]);
      expect(byEvent["escrow.escalated"]).toMatchObject({
        payment_id: paymentId,
        checkout_id: "esc_AAAAAAAAAAAAAAAAAAAAAAAA",
        state: "escalated",
        total: 1_030_000,
        handoff_id: "handoff_nonce_0123456789",
        arbiter_readiness: { family: "evm", rulings_affordable: 5 },
        status_url: `https://checkout.test/e/esc_AAAAAAAAAAAAAAAAAAAAAAAA/status?payment_id=${paymentId}`,
      });
      expect(byEvent["escrow.released"]).toMatchObject({
        state: "released",
        by: "ruling",
        deadline: null,
        receipt_url: `https://checkout.test/r/${paymentId}`,
      });
    } finally {
      await hook.close();
    }
  });

  it("delivers the schedule events a receiver subscribed to, each once, with data.schedule and the event's own fields", async () => {
    const accountId = `acct_sch_${Date.now()}`;
    const hook = await startWebhookReceiver();
    try {
      await rig.endpoints.register({ ...SELLER, accountId, url: `${hook.url}/hook`, events: ["schedule.charge_failed", "schedule.cancelled"] });
      const scheduleId = `sch_${Date.now()}`;
      const events = (["started", "charge_failed", "cancelled"] as const).map((type) => scheduleEnvelope(accountId, type, { scheduleId }));
      for (const envelope of events) {
        await ctx.emitter.db
          .insertInto("outbox" as never)
          .values({
            event_id: envelope.eventId,
            topic: TOPICS.scheduleEvents,
            key: scheduleId,
            payload: Buffer.from(toBinary(eventsV1.EventEnvelopeSchema, envelope)),
          } as never)
          .execute();
      }
      const relay = new OutboxRelay({ db: ctx.emitter.db, bus: ctx.bus });
      expect(await relay.publishBatch()).toBe(3);
      // The broker redelivering the failure delivers nothing more.
      await ctx.bus.publish(TOPICS.scheduleEvents, [{ key: scheduleId, value: toBinary(eventsV1.EventEnvelopeSchema, events[1]!) }]);
      await hook.waitFor(2, 30_000);
      await new Promise((r) => setTimeout(r, 500));
      expect(hook.received).toHaveLength(2);
      const byEvent = Object.fromEntries(hook.received.map((r) => [JSON.parse(r.rawBody).event, JSON.parse(r.rawBody).data]));
      expect(Object.keys(byEvent).sort()).toEqual(["schedule.cancelled", "schedule.charge_failed"]);
      const schedule = {
        id: scheduleId,
        url: `https://checkout.test/schedule/${scheduleId}`,
        periods: 3,
        periods_settled: 1,
        paid_through: "2030-01-02T00:00:00.000Z",
      };
      expect(byEvent["schedule.charge_failed"]).toMatchObject({
        schedule: { ...schedule, status: "active" },
        period: 1,
        reason: "insufficient_funds",
        retry_at: "2030-01-02T00:00:30.000Z",
        window_closes_at: "2030-01-03T00:00:00.000Z",
        test_mode: true,
      });
      expect(byEvent["schedule.cancelled"]).toMatchObject({
        schedule: { ...schedule, status: "cancelled" },
        by: "buyer",
        reason: null,
        onchain: false,
        test_mode: true,
      });
    } finally {
      await hook.close();
    }
  });
}

describe("webhook sources on the embedded stack", () => {
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

describeWith("postgres")("webhook sources on PostgreSQL and Kafka", () => {
  const kafka = infraAvailable("kafka");
  (kafka ? describe : describe.skip)("with a real broker", () => {
    consumerContract(async () => {
      const fresh = await freshPostgresDatabase();
      const emitter = openPostgres({ url: fresh.url, schema: "payments" });
      const webhooks = openPostgres({ url: fresh.url, schema: "webhooks" });
      const bus = new KafkaBus({ brokers: (kafka as string).split(","), clientId: "webhooks-test", groupPrefix: `test-${randomUUID()}.` });
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
