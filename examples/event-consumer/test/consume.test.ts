import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { KafkaBus, outboxRow } from "@c402/bus";
import { accountEventsV1, catalogEventsV1, EVENT_TYPES, paymentEventsV1, TOPICS } from "@c402/contracts";
import { describeWith, infraAvailable } from "@c402/testkit";

/**
 * The example consumer (docs/events.md) against a real Kafka: the service's
 * own bus publishes one event of each topic, and the example, which knows
 * nothing but proto/, prints each one decoded, envelope and payload.
 */
const CONSUMER = join(__dirname, "..", "consume.mjs");
const brokers = infraAvailable("kafka");

describeWith("kafka")("the example event consumer (written only from proto/)", () => {
  let bus: KafkaBus;
  beforeAll(async () => {
    bus = new KafkaBus({ brokers: (brokers as string).split(","), clientId: "example-consumer-test" });
    await bus.ensureTopics(Object.values(TOPICS));
  });
  afterAll(() => bus.close());

  it("decodes every topic's envelope and payload", async () => {
    const settledAt = new Date("2026-11-26T12:00:00Z");
    const rows = [
      outboxRow({
        topic: TOPICS.paymentSettled,
        type: EVENT_TYPES.paymentSettled,
        accountId: "acct_example",
        testMode: true,
        aggregateId: "pay_example0000000000000001",
        occurredAt: settledAt,
        payload: toBinary(
          paymentEventsV1.PaymentSettledSchema,
          create(paymentEventsV1.PaymentSettledSchema, {
            paymentId: "pay_example0000000000000001",
            checkoutId: "chk_example0000000000000001",
            total: 110_500n,
            providerAmount: 100_000n,
            settledAt: timestampFromDate(settledAt),
            testMode: true,
          }),
        ),
      }),
      outboxRow({
        topic: TOPICS.accountActivity,
        type: EVENT_TYPES.accountActivity,
        accountId: "acct_example",
        testMode: false,
        aggregateId: "chk_example0000000000000001",
        payload: toBinary(
          accountEventsV1.AccountActivitySchema,
          create(accountEventsV1.AccountActivitySchema, {
            action: "checkout.voided",
            objectId: "chk_example0000000000000001",
            detailJson: "{}",
            actor: "system",
          }),
        ),
      }),
      outboxRow({
        topic: TOPICS.checkoutReported,
        type: EVENT_TYPES.checkoutReported,
        accountId: "acct_example",
        testMode: false,
        aggregateId: "chk_example0000000000000001",
        payload: toBinary(
          catalogEventsV1.CheckoutReportedSchema,
          create(catalogEventsV1.CheckoutReportedSchema, {
            reportId: "rpt_example0000000000000001",
            checkoutId: "chk_example0000000000000001",
            category: "stale_data",
            kind: "anonymous",
          }),
        ),
      }),
    ];
    for (const row of rows) await bus.publish(row.topic, [{ key: row.key, value: row.payload }]);

    const child = spawn(process.execPath, [CONSUMER], {
      env: { ...process.env, KAFKA_BROKERS: brokers, GROUP_ID: `example-test-${Date.now()}`, FROM_BEGINNING: "true" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const wanted = new Set(rows.map((r) => r.event_id));
    const seen: Record<string, { type: string; key: string; payload: Record<string, unknown>; test_mode: boolean; account_id: string }> = {};
    try {
      for await (const line of createInterface({ input: child.stdout })) {
        const event = JSON.parse(line) as { event_id: string } & (typeof seen)[string];
        if (wanted.has(event.event_id)) seen[event.event_id] = event;
        if (Object.keys(seen).length === wanted.size) break;
      }
    } finally {
      child.kill("SIGTERM");
    }
    const [settled, activity, reported] = rows.map((r) => seen[r.event_id]);
    expect(settled).toMatchObject({
      type: "payment.settled",
      key: "pay_example0000000000000001",
      account_id: "acct_example",
      test_mode: true,
      payload: { payment_id: "pay_example0000000000000001", total: "110500", provider_amount: "100000", settled_at: settledAt.toISOString() },
    });
    expect(activity).toMatchObject({ type: "account.activity", payload: { action: "checkout.voided", actor: "system" } });
    expect(reported).toMatchObject({ type: "checkout.reported", payload: { report_id: "rpt_example0000000000000001", category: "stale_data" } });
  }, 60_000);
});
