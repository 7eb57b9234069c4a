import { EmbeddedPostgres } from "@c402/db";
import { registry } from "@c402/metrics";
import { describeWith, eventually, infraAvailable, uniqueName } from "@c402/testkit";
import { DatabaseBus, DEAD_LETTER_HEADERS, deadLetterTopicOf, KafkaBus, type Bus, type DeadLetterPolicy, type DeliveredMessage } from "../src";

const text = (m: { value: Uint8Array }) => Buffer.from(m.value).toString();
const bytes = (s: string) => new Uint8Array(Buffer.from(s));

async function deadLettersCounted(topic: string, group: string): Promise<number> {
  const metric = (await registry.getSingleMetric("c402_bus_dead_letters_total")?.get())?.values ?? [];
  return metric.find((v) => v.labels.topic === topic && v.labels.group === group)?.value ?? 0;
}

/**
 * A message that keeps failing while the consumer's database answers is a
 * poison message: after a bounded number of attempts it goes to the group's
 * dead-letter topic (counted, logged) and the partition moves on. While the
 * database does not answer it is an outage: nothing is dead-lettered, the
 * message is retried until it succeeds.
 */
function deadLetterContract(makeBus: (policy: DeadLetterPolicy) => Promise<Bus>) {
  let bus: Bus;
  let databaseUp = true;
  const alerts: { topic: string; group: string }[] = [];
  beforeAll(async () => {
    bus = await makeBus({
      afterAttempts: 3,
      dependenciesHealthy: async () => databaseUp,
      onDeadLetter: (topic, group) => alerts.push({ topic, group }),
    });
  });
  afterAll(() => bus.close());

  it("sends a message that fails 3 times while the database answers to dead-letter.<group>, with why, and goes on with the next one", async () => {
    const topic = uniqueName("t-poison");
    const group = uniqueName("g-poison");
    await bus.ensureTopics([topic, deadLetterTopicOf(group)]);
    const attempts: number[] = [];
    const handled: string[] = [];
    const sub = await bus.subscribe({
      topic,
      group,
      handler: async (m) => {
        if (text(m) === "poison") {
          attempts.push(m.attempt);
          throw new TypeError("payload field 7 is not a PaymentSettled");
        }
        handled.push(text(m));
      },
    });
    const dead: DeliveredMessage[] = [];
    const inspector = await bus.subscribe({ topic: deadLetterTopicOf(group), group: uniqueName("g-inspect"), handler: async (m) => void dead.push(m) });
    await bus.publish(topic, [
      { key: "pay_1", value: bytes("before") },
      { key: "pay_1", value: bytes("poison"), headers: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" } },
      { key: "pay_1", value: bytes("after") },
    ]);
    await eventually(() => handled.length === 2 && dead.length === 1);
    expect(handled).toEqual(["before", "after"]);
    expect(attempts).toEqual([1, 2, 3]);
    expect(dead[0]).toMatchObject({
      key: "pay_1",
      headers: {
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        [DEAD_LETTER_HEADERS.topic]: topic,
        [DEAD_LETTER_HEADERS.group]: group,
        [DEAD_LETTER_HEADERS.attempts]: "3",
        [DEAD_LETTER_HEADERS.error]: "TypeError: payload field 7 is not a PaymentSettled",
      },
    });
    expect(text(dead[0]!)).toBe("poison");
    expect(alerts).toContainEqual({ topic, group });
    expect(await deadLettersCounted(topic, group)).toBe(1);
    await sub.stop();
    await inspector.stop();
  });

  it("dead-letters nothing during an outage: a message failing while the database is down is retried past the limit until it succeeds", async () => {
    const topic = uniqueName("t-outage");
    const group = uniqueName("g-outage");
    await bus.ensureTopics([topic, deadLetterTopicOf(group)]);
    databaseUp = false;
    const attempts: number[] = [];
    const handled: string[] = [];
    const sub = await bus.subscribe({
      topic,
      group,
      handler: async (m) => {
        attempts.push(m.attempt);
        if (!databaseUp) throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
        handled.push(text(m));
      },
    });
    const dead: DeliveredMessage[] = [];
    const inspector = await bus.subscribe({ topic: deadLetterTopicOf(group), group: uniqueName("g-inspect"), handler: async (m) => void dead.push(m) });
    await bus.publish(topic, [
      { key: "pay_2", value: bytes("first") },
      { key: "pay_2", value: bytes("second") },
    ]);
    await eventually(() => attempts.length >= 6);
    expect(handled).toEqual([]);
    databaseUp = true;
    await eventually(() => handled.length === 2);
    expect(handled).toEqual(["first", "second"]);
    expect(Math.max(...attempts)).toBeGreaterThan(3);
    await new Promise((r) => setTimeout(r, 300));
    expect(dead).toEqual([]);
    expect(await deadLettersCounted(topic, group)).toBe(0);
    await sub.stop();
    await inspector.stop();
  });
}

describe("dead letters on the embedded bus", () => {
  let pg: EmbeddedPostgres;
  afterAll(() => pg?.close());
  deadLetterContract(async (policy) => {
    pg = await EmbeddedPostgres.open();
    return DatabaseBus.open(pg.forSchema("bus"), undefined, undefined, policy);
  });
});

describeWith("kafka")("dead letters on Kafka", () => {
  deadLetterContract(
    async (policy) =>
      new KafkaBus({ brokers: (infraAvailable("kafka") as string).split(","), clientId: "dead-letter-test", partitions: 1, deadLetter: policy }),
  );
});
