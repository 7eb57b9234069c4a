import { createHook } from "node:async_hooks";
import { describeWith, eventually, infraAvailable, uniqueName } from "@c402/testkit";
import { EmbeddedPostgres } from "@c402/db";
import { Kafka, logLevel } from "kafkajs";
import { DatabaseBus, KafkaBus, type Bus, type DeliveredMessage } from "../src";

const text = (m: { value: Uint8Array }) => Buffer.from(m.value).toString();
const bytes = (s: string) => new Uint8Array(Buffer.from(s));

function busContract(makeBus: () => Bus | Promise<Bus>) {
  let bus: Bus;
  beforeAll(async () => {
    bus = await makeBus();
  });
  afterAll(() => bus.close());

  it("delivers every message to each group, in order per key", async () => {
    const topic = uniqueName("t-order");
    await bus.ensureTopics([topic]);
    const a: string[] = [];
    const b: string[] = [];
    const subA = await bus.subscribe({ topic, group: uniqueName("g"), handler: async (m) => void a.push(`${m.key}:${text(m)}`) });
    const subB = await bus.subscribe({ topic, group: uniqueName("g"), handler: async (m) => void b.push(`${m.key}:${text(m)}`) });
    const messages = [];
    for (let i = 0; i < 20; i++) messages.push({ key: `k${i % 3}`, value: bytes(String(i)) });
    await bus.publish(topic, messages);
    await eventually(() => a.length === 20 && b.length === 20);
    for (const list of [a, b]) {
      for (const key of ["k0", "k1", "k2"]) {
        const seq = list.filter((x) => x.startsWith(`${key}:`)).map((x) => Number(x.split(":")[1]));
        expect(seq).toEqual([...seq].sort((x, y) => x - y));
      }
    }
    await subA.stop();
    await subB.stop();
  });

  it("retries a failing handler until it succeeds, without skipping or reordering", async () => {
    const topic = uniqueName("t-retry");
    await bus.ensureTopics([topic]);
    const seen: DeliveredMessage[] = [];
    let failuresLeft = 2;
    const sub = await bus.subscribe({
      topic,
      group: uniqueName("g"),
      handler: async (m) => {
        if (text(m) === "first" && failuresLeft-- > 0) throw new Error("transient");
        seen.push(m);
      },
    });
    await bus.publish(topic, [
      { key: "same", value: bytes("first") },
      { key: "same", value: bytes("second") },
    ]);
    await eventually(() => seen.length === 2);
    expect(seen.map(text)).toEqual(["first", "second"]);
    expect(seen[0]?.attempt).toBe(3);
    await sub.stop();
  });

  it("hands a fetch's messages to handleMany together, in order; when it throws, each goes to the handler alone, in order, retried as ever", async () => {
    const topic = uniqueName("t-many");
    await bus.ensureTopics([topic]);
    const together: string[][] = [];
    const alone: string[] = [];
    let failuresLeft = 1;
    const sub = await bus.subscribe({
      topic,
      group: uniqueName("g"),
      handler: async (m) => {
        if (text(m) === "bad" && failuresLeft-- > 0) throw new Error("transient");
        alone.push(text(m));
      },
      handleMany: async (messages) => {
        if (messages.some((m) => text(m) === "bad")) throw new Error("one of them cannot go with the others");
        together.push(messages.map(text));
      },
    });
    await bus.publish(
      topic,
      ["a", "b", "c", "d"].map((v) => ({ key: "same", value: bytes(v) })),
    );
    await eventually(() => together.flat().length === 4);
    expect(together.flat()).toEqual(["a", "b", "c", "d"]);
    expect(together.some((fetch) => fetch.length > 1)).toBe(true);
    await bus.publish(
      topic,
      ["e", "bad", "f"].map((v) => ({ key: "same", value: bytes(v) })),
    );
    await eventually(() => alone.length === 3);
    // The fetch failed together, then went one by one: "bad" failed once more alone and was retried; nothing skipped, nothing reordered.
    expect(alone).toEqual(["e", "bad", "f"]);
    expect(together.flat()).toEqual(["a", "b", "c", "d"]);
    await sub.stop();
  });

  it("carries headers and keys", async () => {
    const topic = uniqueName("t-headers");
    await bus.ensureTopics([topic]);
    const seen: DeliveredMessage[] = [];
    const sub = await bus.subscribe({ topic, group: uniqueName("g"), handler: async (m) => void seen.push(m) });
    await bus.publish(topic, [{ key: "pay_1", value: bytes("x"), headers: { "content-type": "application/protobuf" } }]);
    await eventually(() => seen.length === 1);
    expect(seen[0]).toMatchObject({ topic, key: "pay_1", headers: { "content-type": "application/protobuf" } });
    await sub.stop();
  });

  it("answers ping", async () => {
    await expect(bus.ping()).resolves.toBeUndefined();
  });
}

describe("DatabaseBus (embedded)", () => {
  let pg: EmbeddedPostgres;
  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
  });
  afterAll(() => pg.close());
  busContract(() => DatabaseBus.open(pg.forSchema("bus")));

  it("redelivers what a group had not handled when the process stopped, and nothing it had", async () => {
    const topic = uniqueName("t-restart");
    const first = await DatabaseBus.open(pg.forSchema("bus"));
    const seen1: string[] = [];
    const sub = await first.subscribe({
      topic,
      group: "g",
      handler: async (m) => {
        if (text(m) === "two") throw new Error("crash before handling two");
        seen1.push(text(m));
      },
    });
    await first.publish(topic, [
      { key: "k", value: bytes("one") },
      { key: "k", value: bytes("two") },
    ]);
    await eventually(() => seen1.length === 1);
    await sub.stop();
    await first.close();

    const second = await DatabaseBus.open(pg.forSchema("bus"));
    const seen2: string[] = [];
    await second.subscribe({ topic, group: "g", handler: async (m) => void seen2.push(text(m)) });
    await eventually(() => seen2.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen2).toEqual(["two"]);
    await second.close();
  });

  it("commits a group's offset once it has run dry, without being stopped", async () => {
    const topic = uniqueName("t-dry");
    const bus = await DatabaseBus.open(pg.forSchema("bus"));
    const seen: string[] = [];
    await bus.subscribe({ topic, group: "g", handler: async (m) => void seen.push(text(m)) });
    await bus.publish(
      topic,
      ["a", "b", "c"].map((v) => ({ key: "k", value: bytes(v) })),
    );
    await eventually(() => seen.length === 3);
    const db = pg.forSchema("bus").db;
    const last = await db
      .selectFrom("bus_messages")
      .select((eb) => eb.fn.max("seq").as("seq"))
      .where("topic", "=", topic)
      .executeTakeFirstOrThrow();
    const offset = () => db.selectFrom("bus_offsets").select("seq").where("topic", "=", topic).where("consumer_group", "=", "g").executeTakeFirstOrThrow();
    await eventually(
      () => offset(),
      (row) => BigInt(row.seq) === BigInt(last.seq as bigint),
      3_000,
    );
    await bus.close();
  });
});

describe("DatabaseBus pruning", () => {
  let pg: EmbeddedPostgres;
  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
  });
  afterAll(() => pg.close());

  it("drops what every group handled once 1,000 messages went through, and goes on delivering", async () => {
    const topic = uniqueName("t-prune");
    const roundErrors: unknown[] = [];
    const bus = await DatabaseBus.open(pg.forSchema("bus"), undefined, (err) => roundErrors.push(err));
    try {
      const seen: string[] = [];
      await bus.subscribe({ topic, group: "g", handler: async (m) => void seen.push(text(m)) });
      for (let i = 0; i < 11; i++)
        await bus.publish(
          topic,
          Array.from({ length: 100 }, (_, j) => ({ key: "k", value: bytes(`m${i * 100 + j}`) })),
        );
      await eventually(() => seen.length === 1100, Boolean, 20_000);
      const db = pg.forSchema("bus").db;
      const kept = async () =>
        Number(
          (
            await db
              .selectFrom("bus_messages")
              .select((eb) => eb.fn.countAll().as("n"))
              .where("topic", "=", topic)
              .executeTakeFirstOrThrow()
          ).n,
        );
      await eventually(kept, (n) => n <= 100, 5_000);
      await bus.publish(topic, [{ key: "k", value: bytes("after") }]);
      await eventually(() => seen.includes("after"));
      expect(seen).toEqual([...Array.from({ length: 1100 }, (_, i) => `m${i}`), "after"]);
      expect(roundErrors).toEqual([]);
    } finally {
      await bus.close();
    }
  });
});

describeWith("kafka")("KafkaBus against a real broker", () => {
  busContract(() => new KafkaBus({ brokers: (infraAvailable("kafka") as string).split(","), clientId: "bus-test" }));

  it("stays in its group while a handler keeps failing past the session timeout (an outage of what it writes to), then goes on", async () => {
    const brokers = (infraAvailable("kafka") as string).split(",");
    const topic = uniqueName("t-outage");
    const bus = new KafkaBus({ brokers, clientId: "outage" });
    await bus.ensureTopics([topic]);
    // The consumer's session is 10 s: the handler fails for 15 s, then recovers.
    const recoversAt = Date.now() + 15_000;
    const seen: string[] = [];
    const sub = await bus.subscribe({
      topic,
      group: uniqueName("g"),
      handler: async (m) => {
        if (Date.now() < recoversAt) throw new Error("the database could not be reached");
        seen.push(text(m));
      },
    });
    await bus.publish(topic, [{ key: "k", value: bytes("during") }]);
    await eventually(() => seen.length === 1, Boolean, 30_000);
    await bus.publish(topic, [{ key: "k", value: bytes("after") }]);
    await eventually(() => seen.length === 2, Boolean, 20_000);
    expect(seen).toEqual(["during", "after"]);
    await sub.stop();
    await bus.close();
  }, 60_000);

  it("several processes creating the same new topics at once each return only when every partition has a leader, so a publish right after succeeds", async () => {
    const brokers = (infraAvailable("kafka") as string).split(",");
    const topics = Array.from({ length: 6 }, () => uniqueName("t-race"));
    const buses = Array.from({ length: 4 }, (_, i) => new KafkaBus({ brokers, clientId: `race-${i}`, partitions: 3 }));
    try {
      await Promise.all(buses.map((b) => b.ensureTopics(topics)));
      const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      const { topics: found } = await admin.fetchTopicMetadata({ topics });
      await admin.disconnect();
      expect(found.map((t) => t.partitions.length)).toEqual(topics.map(() => 3));
      expect(found.every((t) => t.partitions.every((p) => p.leader >= 0))).toBe(true);
      await Promise.all(buses.flatMap((b) => topics.map((t) => b.publish(t, [{ key: "k", value: bytes("x") }]))));
    } finally {
      await Promise.all(buses.map((b) => b.close()));
    }
  }, 60_000);

  it("resumes a group from its committed offset (at-least-once across restarts)", async () => {
    const brokers = (infraAvailable("kafka") as string).split(",");
    const topic = uniqueName("t-resume");
    const group = uniqueName("g");
    const first = new KafkaBus({ brokers, clientId: "resume-1" });
    await first.ensureTopics([topic]);
    const seen1: string[] = [];
    const sub1 = await first.subscribe({ topic, group, handler: async (m) => void seen1.push(text(m)) });
    await first.publish(topic, [{ key: "k", value: bytes("one") }]);
    await eventually(() => seen1.length === 1);
    await sub1.stop();
    await first.publish(topic, [{ key: "k", value: bytes("two") }]);
    await first.close();

    const second = new KafkaBus({ brokers, clientId: "resume-2" });
    const seen2: string[] = [];
    const sub2 = await second.subscribe({ topic, group, handler: async (m) => void seen2.push(text(m)) });
    await eventually(() => seen2.length >= 1);
    expect(seen2).toEqual(["two"]);
    await sub2.stop();
    await second.close();
  });

  it("commits a group's offsets at most once an interval, what it handled last once the interval passes, and everything when it stops", async () => {
    const brokers = (infraAvailable("kafka") as string).split(",");
    const kafka = new Kafka({ brokers, clientId: "commits-admin", logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    const committed = async (group: string, topic: string) => Number((await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]!.partitions[0]!.offset);
    /** Publishes `count` messages one at a time, each handled before the next: every one a batch of its own. */
    const oneByOne = async (bus: KafkaBus, topic: string, seen: string[], count: number) => {
      for (let i = 0; i < count; i++) {
        await bus.publish(topic, [{ key: "k", value: bytes(String(i)) }]);
        await eventually(() => seen.length === i + 1);
      }
    };
    try {
      // A long interval: the first batch is committed at once, the next 9 wait; stopping commits them.
      const slow = { topic: uniqueName("t-commits"), group: uniqueName("g"), seen: [] as string[] };
      const slowBus = new KafkaBus({ brokers, clientId: "commits-slow", partitions: 1, offsetCommitMs: 60_000 });
      await slowBus.ensureTopics([slow.topic]);
      const slowSub = await slowBus.subscribe({ topic: slow.topic, group: slow.group, handler: async (m) => void slow.seen.push(text(m)) });
      await oneByOne(slowBus, slow.topic, slow.seen, 10);
      expect(await committed(slow.group, slow.topic)).toBe(1);
      await slowSub.stop();
      expect(await committed(slow.group, slow.topic)).toBe(10);
      await slowBus.close();

      // A short one: once the group runs dry, the timer commits what it handled last.
      const quick = { topic: uniqueName("t-commits"), group: uniqueName("g"), seen: [] as string[] };
      const quickBus = new KafkaBus({ brokers, clientId: "commits-quick", partitions: 1, offsetCommitMs: 300 });
      await quickBus.ensureTopics([quick.topic]);
      const quickSub = await quickBus.subscribe({ topic: quick.topic, group: quick.group, handler: async (m) => void quick.seen.push(text(m)) });
      await oneByOne(quickBus, quick.topic, quick.seen, 10);
      await eventually(
        () => committed(quick.group, quick.topic),
        (offset) => offset === 10,
        5_000,
      );
      await quickSub.stop();
      await quickBus.close();
    } finally {
      await admin.disconnect();
    }
  });

  // kafkajs 2.2.4 re-armed a 1 ms timer on every broker connection for as long as it was open (tulios/kafkajs#1556),
  // waking each service's event loop a thousand times a second; patches/kafkajs@2.2.4.patch stops it.
  it("leaves the event loop alone while idle: a subscribed, connected bus arms a handful of timers a second, not one a millisecond", async () => {
    const brokers = (infraAvailable("kafka") as string).split(",");
    const topic = uniqueName("t-idle");
    const bus = new KafkaBus({ brokers, clientId: "idle" });
    await bus.ensureTopics([topic]);
    const seen: string[] = [];
    const sub = await bus.subscribe({ topic, group: uniqueName("g"), handler: async (m) => void seen.push(text(m)) });
    await bus.publish(topic, [{ key: "k", value: bytes("wake") }]);
    await eventually(() => seen.length === 1);
    let timers = 0;
    const hook = createHook({
      init: (_id, type) => {
        if (type === "Timeout") timers++;
      },
    }).enable();
    await new Promise((r) => setTimeout(r, 1_000));
    hook.disable();
    await sub.stop();
    await bus.close();
    // A heartbeat a second and a long-polling fetch arm a few; the loop armed about a thousand.
    expect(timers).toBeLessThan(50);
  });
});
