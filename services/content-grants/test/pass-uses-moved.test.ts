import { randomUUID } from "node:crypto";
import { DatabaseBus, decodeEnvelope, KafkaBus, OutboxRelay, type Bus, type Subscription } from "@c402/bus";
import { TOPICS } from "@c402/contracts";
import { EmbeddedPostgres, migrate, openPostgres, type ServiceDatabase } from "@c402/db";
import { identityMigrations } from "@c402/identity";
import { describeWith, eventually, freshPostgresDatabase, infraAvailable } from "@c402/testkit";
import type { Kysely } from "kysely";
import { contentGrantsMigrations } from "../src";
import { subscribePassUsesMoved } from "../src/events/pass-uses-moved-consumer";
import { passStore, type ContentGrantsDb } from "../src/store/pass-store";

/**
 * Issue 44's move of pass-use counts from identity to content-grants, on both
 * stacks: identity's migration 0014 writes every live count to its outbox and
 * drops its table in one transaction; content-grants adds each count to its
 * own once, beside reads it counted meanwhile, however often the bus delivers.
 */
function moveContract(open: () => Promise<{ identity: ServiceDatabase; grants: ServiceDatabase; bus: Bus; close(): Promise<void> }>) {
  let ctx: Awaited<ReturnType<typeof open>>;
  let subscription: Subscription | undefined;
  const now = Date.now();
  const future = new Date(now + 86_400_000);
  const past = new Date(now - 60_000);
  /** More than two events' worth (500 counts each), so the batching is crossed. */
  const MANY = 1_203;

  beforeAll(async () => {
    ctx = await open();
  });
  afterAll(async () => {
    await subscription?.stop();
    await ctx.close();
  });

  it("moves every live count once, adding it to reads counted meanwhile; expired counts stay behind", async () => {
    const before = Object.fromEntries(Object.entries(identityMigrations).filter(([name]) => name < "0013"));
    await migrate(ctx.identity, before);
    const identityDb = ctx.identity.db as Kysely<any>;
    const rows = Array.from({ length: MANY }, (_, i) => ({ pass_id: `pass${String(i).padStart(5, "0")}`, used: (i % 7) + 1, expires_at: future }));
    for (let at = 0; at < rows.length; at += 400)
      await identityDb
        .insertInto("pass_uses")
        .values(rows.slice(at, at + 400))
        .execute();
    await identityDb.insertInto("pass_uses").values({ pass_id: "expired", used: 5, expires_at: past }).execute();

    // content-grants runs first (as a rollout starts it) and counts a read of a moved pass before the counts arrive.
    await migrate(ctx.grants, contentGrantsMigrations);
    const grantsDb = ctx.grants.db as ContentGrantsDb;
    expect(await passStore.countUse(grantsDb, "pass00000", 10, future)).toBe(1);

    await migrate(ctx.identity, identityMigrations);
    const tables = await identityDb.introspection.getTables();
    expect(tables.filter((t) => t.schema === "identity").map((t) => t.name)).not.toContain("pass_uses");
    const outbox = await identityDb.selectFrom("outbox").select(["topic", "payload"]).execute();
    expect(outbox.map((r: { topic: string }) => r.topic)).toEqual([TOPICS.passUsesMoved, TOPICS.passUsesMoved, TOPICS.passUsesMoved]);

    await ctx.bus.ensureTopics([TOPICS.passUsesMoved]);
    subscription = await subscribePassUsesMoved(ctx.bus, grantsDb);
    const relay = new OutboxRelay({ db: ctx.identity.db, bus: ctx.bus });
    expect(await relay.publishBatch()).toBe(3);
    // The bus delivers every batch a second time (a consumer crashed before its commit was acknowledged).
    await ctx.bus.publish(
      TOPICS.passUsesMoved,
      outbox.map((r: { payload: Buffer }) => ({ key: decodeEnvelope(new Uint8Array(r.payload)).aggregateId, value: new Uint8Array(r.payload) })),
    );

    const moved = await eventually(
      () => grantsDb.selectFrom("pass_uses").select(["pass_id", "used"]).orderBy("pass_id").execute(),
      (got) => got.length === MANY,
      60_000,
    );
    await new Promise((r) => setTimeout(r, 1_000));
    const settled = await grantsDb.selectFrom("pass_uses").select(["pass_id", "used"]).orderBy("pass_id").execute();
    expect(settled).toEqual(moved);
    expect(settled).toEqual(rows.map((r) => ({ pass_id: r.pass_id, used: r.pass_id === "pass00000" ? r.used + 1 : r.used })));
  });
}

describe("pass-use counts moved to content-grants, on the embedded stack", () => {
  moveContract(async () => {
    const pg = await EmbeddedPostgres.open();
    const bus = await DatabaseBus.open(pg.forSchema("bus"));
    return {
      identity: pg.forSchema("identity"),
      grants: pg.forSchema("content_grants"),
      bus,
      async close() {
        await bus.close();
        await pg.close();
      },
    };
  });
});

describeWith("postgres")("pass-use counts moved to content-grants, on PostgreSQL and Kafka", () => {
  const kafka = infraAvailable("kafka");
  (kafka ? describe : describe.skip)("with a real broker", () => {
    moveContract(async () => {
      const fresh = await freshPostgresDatabase();
      const identity = openPostgres({ url: fresh.url, schema: "identity" });
      const grants = openPostgres({ url: fresh.url, schema: "content_grants" });
      const bus = new KafkaBus({ brokers: (kafka as string).split(","), clientId: "content-grants-test", groupPrefix: `test-${randomUUID()}.` });
      return {
        identity,
        grants,
        bus,
        async close() {
          await bus.close();
          await identity.close();
          await grants.close();
          await fresh.drop();
        },
      };
    });
  });
});
