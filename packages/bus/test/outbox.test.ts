import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { paymentEventsV1 } from "@c402/contracts";
import { EmbeddedPostgres, migrate, openPostgres, sql, type QueryCreator, type ServiceDatabase } from "@c402/db";
import { describeWith, eventually, freshPostgresDatabase } from "@c402/testkit";
import {
  decodeEnvelope,
  enqueueEvent,
  eventAfter,
  idempotentConsumer,
  outboxRow,
  DatabaseBus,
  OutboxRelay,
  outboxMigration,
  processedEventsMigration,
  sleep,
  type Bus,
} from "../src";

const TOPIC = "events.test.v1.thing";

function payload(id: string): Uint8Array {
  return toBinary(paymentEventsV1.PaymentSettledSchema, create(paymentEventsV1.PaymentSettledSchema, { paymentId: id, total: 110_500n }));
}

function outboxContract(open: () => Promise<{ db: ServiceDatabase; busDb: ServiceDatabase; close(): Promise<void> }>) {
  let ctx: Awaited<ReturnType<typeof open>>;
  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.db, { "0001_outbox": outboxMigration, "0002_processed": processedEventsMigration });
    await ctx.db.db.schema.createTable("effects").addColumn("payment_id", "text").execute();
  });
  afterAll(() => ctx.close());

  it("publishes only committed events, exactly the rows written in the transaction", async () => {
    const db = ctx.db.db;
    await db.transaction().execute(async (trx) => {
      await enqueueEvent(trx, { topic: TOPIC, type: "payment.settled", accountId: "acct_1", testMode: true, aggregateId: "pay_a", payload: payload("pay_a") });
    });
    await expect(
      db.transaction().execute(async (trx) => {
        await enqueueEvent(trx, {
          topic: TOPIC,
          type: "payment.settled",
          accountId: "acct_1",
          testMode: true,
          aggregateId: "pay_b",
          payload: payload("pay_b"),
        });
        throw new Error("state change failed");
      }),
    ).rejects.toThrow("state change failed");

    const bus = await DatabaseBus.open(ctx.busDb);
    const received: string[] = [];
    await bus.subscribe({ topic: TOPIC, group: "g", handler: async (m) => void received.push(m.key) });
    const relay = new OutboxRelay({ db, bus });
    expect(await relay.publishBatch()).toBe(1);
    expect(await relay.publishBatch()).toBe(0);
    await eventually(() => received.length === 1);
    expect(received).toEqual(["pay_a"]);
    await bus.close();
    const row = await db.selectFrom("outbox").select(["published_at"]).where("key", "=", "pay_a").executeTakeFirstOrThrow();
    // A Date, of whichever realm: the embedded database's rows are made outside Jest's sandbox, whose Date is its own.
    expect(Object.prototype.toString.call(row.published_at)).toBe("[object Date]");
  });

  it("keeps rows unpublished when the broker refuses, and publishes them later", async () => {
    const db = ctx.db.db;
    await db.transaction().execute((trx) =>
      enqueueEvent(trx, {
        topic: TOPIC,
        type: "payment.settled",
        accountId: "acct_1",
        testMode: false,
        aggregateId: "pay_c",
        payload: payload("pay_c"),
      }).then(() => undefined),
    );
    const broken = { publish: async () => Promise.reject(new Error("broker down")) } as unknown as Bus;
    await expect(new OutboxRelay({ db, bus: broken }).publishBatch()).rejects.toThrow("broker down");
    const pending = await db.selectFrom("outbox").select("key").where("published_at", "is", null).execute();
    expect(pending.map((r) => r.key)).toEqual(["pay_c"]);

    const bus = await DatabaseBus.open(ctx.busDb);
    const got: Uint8Array[] = [];
    await bus.subscribe({ topic: TOPIC, group: "g", handler: async (m) => void got.push(m.value) });
    const relay = new OutboxRelay({ db, bus, intervalMs: 10 });
    relay.start();
    await eventually(() => got.length === 1);
    await relay.stop();
    await bus.close();
    expect(got).toHaveLength(1);
    const envelope = decodeEnvelope(got[0] as Uint8Array);
    expect(envelope).toMatchObject({ type: "payment.settled", accountId: "acct_1", testMode: false, aggregateId: "pay_c" });
    expect(envelope.eventId).toMatch(/^evt_/);
    expect(fromBinary(paymentEventsV1.PaymentSettledSchema, envelope.payload).total).toBe(110_500n);
  });

  it("skips rows leased by another relay until the lease lapses (a relay that died mid-publish)", async () => {
    const db = ctx.db.db;
    await db
      .transaction()
      .execute((trx) =>
        enqueueEvent(trx, { topic: TOPIC, type: "payment.settled", accountId: "acct_3", testMode: true, aggregateId: "pay_e", payload: payload("pay_e") }).then(
          () => undefined,
        ),
      );
    await db
      .updateTable("outbox")
      .set({ leased_until: new Date(Date.now() + 60_000) })
      .where("key", "=", "pay_e")
      .execute();
    const published: string[] = [];
    const bus = { publish: async (_t: string, m: { key: string }[]) => void published.push(...m.map((x) => x.key)) } as unknown as Bus;
    expect(await new OutboxRelay({ db, bus }).publishBatch()).toBe(0);
    await db
      .updateTable("outbox")
      .set({ leased_until: new Date(Date.now() - 1_000) })
      .where("key", "=", "pay_e")
      .execute();
    expect(await new OutboxRelay({ db, bus }).publishBatch()).toBe(1);
    expect(published).toEqual(["pay_e"]);
  });

  it("applies a redelivered event once (idempotent consumer)", async () => {
    const db = ctx.db.db;
    let eventValue: Uint8Array | undefined;
    const bus = await DatabaseBus.open(ctx.busDb);
    await bus.subscribe({ topic: TOPIC, group: "capture", handler: async (m) => void (m.key === "pay_d" && (eventValue = m.value)) });
    await db
      .transaction()
      .execute((trx) =>
        enqueueEvent(trx, { topic: TOPIC, type: "payment.settled", accountId: "acct_2", testMode: true, aggregateId: "pay_d", payload: payload("pay_d") }).then(
          () => undefined,
        ),
      );
    await new OutboxRelay({ db, bus }).publishBatch();
    await eventually(() => eventValue !== undefined);
    await bus.close();
    const handler = idempotentConsumer(db, "effects-writer", async (trx, env) => {
      const p = fromBinary(paymentEventsV1.PaymentSettledSchema, env.payload);
      await trx.insertInto("effects").values({ payment_id: p.paymentId }).execute();
    });
    await handler({ value: eventValue as Uint8Array });
    await handler({ value: eventValue as Uint8Array });
    await Promise.all([handler({ value: eventValue as Uint8Array }), handler({ value: eventValue as Uint8Array })].map((p) => p.catch(() => undefined)));
    const effects = await db.selectFrom("effects").selectAll().where("payment_id", "=", "pay_d").execute();
    expect(effects).toHaveLength(1);
  });

  it("writes an event in the same statement as its change, only when the change touched a row", async () => {
    const db = ctx.db.db;
    await db.insertInto("effects").values({ payment_id: "pay_cte" }).execute();
    const change = (id: string) => (q: QueryCreator<any>) =>
      q
        .updateTable("effects")
        .set({ payment_id: `${id}_done` })
        .where("payment_id", "=", id)
        .returningAll();
    const event = (id: string) =>
      outboxRow({ topic: TOPIC, type: "payment.settled", accountId: "acct_1", testMode: true, aggregateId: id, payload: payload(id) });
    const events = async (key: string) => db.selectFrom("outbox").select(["event_id", "payload"]).where("key", "=", key).execute();

    const missing = event("pay_none");
    expect(await db.with("changed", change("pay_none")).with("event", eventAfter("changed", missing)).selectFrom("changed").selectAll().execute()).toEqual([]);
    expect(await events("pay_none")).toEqual([]);

    const written = event("pay_cte");
    const changed = await db.with("changed", change("pay_cte")).with("event", eventAfter("changed", written)).selectFrom("changed").selectAll().execute();
    expect(changed).toEqual([{ payment_id: "pay_cte_done" }]);
    const [row, ...more] = await events("pay_cte");
    expect(more).toEqual([]);
    expect(row!.event_id).toBe(written.event_id);
    expect(decodeEnvelope(new Uint8Array(row!.payload))).toMatchObject({
      eventId: written.event_id,
      aggregateId: "pay_cte",
      accountId: "acct_1",
      testMode: true,
    });
  });

  it("deletes published rows past their retention, oldest first, never an unpublished one", async () => {
    const db = ctx.db.db;
    const event = (id: string) => ({ topic: TOPIC, type: "payment.settled", accountId: "acct_r", testMode: true, aggregateId: id, payload: payload(id) });
    const bus = await DatabaseBus.open(ctx.busDb);
    const relay = new OutboxRelay({ db, bus });
    // Whatever earlier tests left is published first, so only this test's rows change below.
    while ((await relay.publishBatch()) > 0);
    for (const id of ["ret_old_1", "ret_old_2", "ret_young"]) await enqueueEvent(db, event(id));
    expect(await relay.publishBatch()).toBe(3);
    // Two published 8 days ago; one never published although written 30 days ago (a stuck event).
    await db
      .updateTable("outbox")
      .set({ published_at: sql`now() - interval '8 days'` })
      .where("key", "in", ["ret_old_1", "ret_old_2"])
      .execute();
    await enqueueEvent(db, event("ret_unpublished"));
    await db
      .updateTable("outbox")
      .set({ created_at: sql`now() - interval '30 days'` })
      .where("key", "=", "ret_unpublished")
      .execute();
    const keys = async () => (await db.selectFrom("outbox").select("key").where("key", "like", "ret_%").orderBy("seq").execute()).map((r) => r.key);

    expect(await relay.prunePublished()).toEqual({ deleted: 2, caughtUp: true });
    expect(await keys()).toEqual(["ret_young", "ret_unpublished"]);
    expect(await relay.prunePublished()).toEqual({ deleted: 0, caughtUp: true });

    // A shorter retention: the young row goes too, the unpublished one stays.
    const strict = new OutboxRelay({ db, bus, retainPublishedSeconds: 0 });
    expect((await strict.prunePublished()).caughtUp).toBe(true);
    expect(await keys()).toEqual(["ret_unpublished"]);
    expect(await strict.publishBatch()).toBe(1);
    await bus.close();
  });

  it("spaces its rounds: a round starts no sooner than the spacing after the last, and the commits meanwhile share it", async () => {
    const db = ctx.db.db;
    const rounds: { at: number; keys: string[] }[] = [];
    const bus = { publish: async (_t: string, m: { key: string }[]) => void rounds.push({ at: Date.now(), keys: m.map((x) => x.key) }) } as unknown as Bus;
    const relay = new OutboxRelay({ db, bus, roundSpacingMs: 400, intervalMs: 60_000 });
    while ((await relay.publishBatch()) > 0); // what earlier tests left
    rounds.length = 0;
    const started = Date.now();
    relay.start(); // a first round at once: nothing to publish
    try {
      await sleep(50);
      const enqueue = (key: string) =>
        enqueueEvent(db, { topic: TOPIC, type: "payment.settled", accountId: "acct_s", testMode: true, aggregateId: key, payload: payload(key) });
      await enqueue("spaced_1");
      relay.poke();
      await sleep(100);
      expect(rounds).toEqual([]);
      await enqueue("spaced_2");
      relay.poke();
      await eventually(() => rounds.length > 0);
      expect(rounds.map((r) => r.keys)).toEqual([["spaced_1", "spaced_2"]]);
      expect(rounds[0]!.at - started).toBeGreaterThanOrEqual(400);
    } finally {
      await relay.stop();
    }
  });

  it("a running relay publishes, then deletes what is past its retention by itself", async () => {
    const db = ctx.db.db;
    const bus = await DatabaseBus.open(ctx.busDb);
    const received: string[] = [];
    await bus.subscribe({ topic: TOPIC, group: "retention", handler: async (m) => void received.push(m.key) });
    const relay = new OutboxRelay({ db, bus, intervalMs: 20, roundSpacingMs: 0, retainPublishedSeconds: 0, pruneIntervalMs: 0 });
    relay.start();
    try {
      await enqueueEvent(db, {
        topic: TOPIC,
        type: "payment.settled",
        accountId: "acct_r",
        testMode: true,
        aggregateId: "ret_running",
        payload: payload("ret_running"),
      });
      relay.poke();
      await eventually(() => received.includes("ret_running"));
      await eventually(async () => (await db.selectFrom("outbox").select("seq").where("key", "=", "ret_running").execute()).length === 0);
    } finally {
      await relay.stop();
      await bus.close();
    }
  });
}

describe("outbox on embedded PostgreSQL", () => {
  outboxContract(async () => {
    const pg = await EmbeddedPostgres.open();
    return { db: pg.forSchema("emitter"), busDb: pg.forSchema("bus"), close: () => pg.close() };
  });
});

describeWith("postgres")("outbox on PostgreSQL", () => {
  outboxContract(async () => {
    const fresh = await freshPostgresDatabase();
    const db = openPostgres({ url: fresh.url, schema: "emitter" });
    // The embedded bus needs the single-session embedded database.
    const busPg = await EmbeddedPostgres.open();
    return {
      db,
      busDb: busPg.forSchema("bus"),
      async close() {
        await busPg.close();
        await db.close();
        await fresh.drop();
      },
    };
  });
});
