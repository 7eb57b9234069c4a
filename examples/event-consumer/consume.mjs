// An internal consumer of the service's events, written only from proto/ (docs/events.md):
// it reads the .proto files at start-up with protobufjs (no generated code, no code of the
// service), subscribes to every topic, unwraps each EventEnvelope and decodes its payload by
// the envelope's `type`, and prints one JSON line per event.
//
//   KAFKA_BROKERS=127.0.0.1:9092 node examples/event-consumer/consume.mjs
//
// Settings: KAFKA_BROKERS (comma-separated), GROUP_ID (default example-event-consumer),
// FROM_BEGINNING (true: read each topic from its start), MAX_EVENTS (exit after that many).
import { fileURLToPath } from "node:url";
import { Kafka, logLevel } from "kafkajs";
import protobuf from "protobufjs";

const PROTO_ROOT = fileURLToPath(new URL("../../proto/", import.meta.url));

/** Topic → the message its envelopes carry, by the envelope's `type` (docs/events.md). */
const TOPICS = {
  "events.payments.v1.payment-settled": { "payment.settled": "events.payments.v1.PaymentSettled" },
  "events.account.v1.account-activity": { "account.activity": "events.account.v1.AccountActivity" },
  "events.catalog.v1.checkout-reported": { "checkout.reported": "events.catalog.v1.CheckoutReported" },
};

const root = new protobuf.Root();
// Imports resolve against proto/; google/protobuf/*.proto are protobufjs's own common types.
root.resolvePath = (_origin, target) => (target.startsWith("google/protobuf/") ? target : `${PROTO_ROOT}${target}`);
await root.load(
  [
    "events/v1/envelope.proto",
    "events/payments/v1/payment_settled.proto",
    "events/account/v1/account_activity.proto",
    "events/catalog/v1/checkout_reported.proto",
  ],
  { keepCase: true },
);
const Envelope = root.lookupType("events.v1.EventEnvelope");
const toJson = { longs: String, bytes: String, defaults: true, enums: String };
const timestamp = (t) => (t ? new Date(Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6)).toISOString() : null);

const brokers = (process.env.KAFKA_BROKERS ?? "127.0.0.1:9092").split(",");
const maxEvents = process.env.MAX_EVENTS ? Number(process.env.MAX_EVENTS) : Infinity;
const kafka = new Kafka({ clientId: "example-event-consumer", brokers, logLevel: logLevel.ERROR });
const consumer = kafka.consumer({ groupId: process.env.GROUP_ID ?? "example-event-consumer" });

let seen = 0;
await consumer.connect();
for (const topic of Object.keys(TOPICS)) await consumer.subscribe({ topic, fromBeginning: process.env.FROM_BEGINNING === "true" });
const stop = async (code = 0) => {
  await consumer.disconnect();
  process.exit(code);
};
process.once("SIGINT", () => void stop());
process.once("SIGTERM", () => void stop());

await consumer.run({
  eachMessage: async ({ topic, partition, message }) => {
    const envelope = Envelope.decode(message.value);
    const typeName = TOPICS[topic]?.[envelope.type];
    // An event type this consumer does not know yet (a newer producer) is passed over, not a failure.
    const payload = typeName ? root.lookupType(typeName).toObject(root.lookupType(typeName).decode(envelope.payload), toJson) : null;
    for (const [name, value] of Object.entries(payload ?? {})) if (value && typeof value === "object" && "seconds" in value) payload[name] = timestamp(value);
    process.stdout.write(
      `${JSON.stringify({
        topic,
        partition,
        key: message.key?.toString() ?? null,
        event_id: envelope.event_id,
        type: envelope.type,
        occurred_at: timestamp(envelope.occurred_at),
        account_id: envelope.account_id,
        test_mode: envelope.test_mode,
        aggregate_id: envelope.aggregate_id,
        payload,
      })}\n`,
    );
    if (++seen >= maxEvents) setImmediate(() => void stop());
  },
});
