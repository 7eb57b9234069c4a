import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedPostgres, sql, type Kysely } from "../src";
import { checkpointDue, CHECKPOINT_TIMEOUT_SECONDS, vacuumDue } from "../src/embedded-upkeep";

describe("which tables the embedded upkeep vacuums", () => {
  const table = { schema: "s", table: "t" };
  it("follows autovacuum's rules, with dead rows capped at 1,000", () => {
    expect(vacuumDue({ ...table, liveRows: 100, deadRows: 70, insertedSinceVacuum: 0 })).toBe(false); // 50 + 20 = 70
    expect(vacuumDue({ ...table, liveRows: 100, deadRows: 71, insertedSinceVacuum: 0 })).toBe(true);
    // A queue with a long history: 20% of it would be 20,000 dead rows; 1,000 is the most kept.
    expect(vacuumDue({ ...table, liveRows: 100_000, deadRows: 1_000, insertedSinceVacuum: 0 })).toBe(false);
    expect(vacuumDue({ ...table, liveRows: 100_000, deadRows: 1_001, insertedSinceVacuum: 0 })).toBe(true);
    // Insert-only: 1,000 + 20% of the live rows since the last vacuum.
    expect(vacuumDue({ ...table, liveRows: 10_000, deadRows: 0, insertedSinceVacuum: 3_000 })).toBe(false);
    expect(vacuumDue({ ...table, liveRows: 10_000, deadRows: 0, insertedSinceVacuum: 3_001 })).toBe(true);
  });
});

describe("when the embedded upkeep checkpoints", () => {
  const limits = { maxWalBytes: 64 * 1024 * 1024, timeoutSeconds: CHECKPOINT_TIMEOUT_SECONDS };
  it("once the log since the last checkpoint reaches its limit, or after five minutes if anything was written", () => {
    expect(checkpointDue({ bytes: 64 * 1024 * 1024 - 1, seconds: 10 }, limits)).toBe(false);
    expect(checkpointDue({ bytes: 64 * 1024 * 1024, seconds: 10 }, limits)).toBe(true);
    expect(checkpointDue({ bytes: 1024 * 1024, seconds: 299 }, limits)).toBe(false);
    expect(checkpointDue({ bytes: 1024 * 1024, seconds: 300 }, limits)).toBe(true);
    // An idle database: the last checkpoint's own records are all the log holds since.
    expect(checkpointDue({ bytes: 200, seconds: 3_600 }, limits)).toBe(false);
  });
});

interface Activity {
  dead: number;
  vacuums: number;
}

/** The table's counts once this session's pending statistics are flushed (PostgreSQL flushes them at most once a second). */
async function activityOf(db: Kysely<any>, table: string): Promise<Activity> {
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<Activity>`
    select n_dead_tup::int as dead, vacuum_count::int as vacuums from pg_stat_user_tables
    where schemaname = 'upkeep' and relname = ${table}`.execute(db);
  return rows[0] ?? { dead: -1, vacuums: -1 };
}

async function tablesWithHistory(db: Kysely<any>): Promise<void> {
  await sql`create schema if not exists upkeep`.execute(db);
  for (const table of ["churned", "quiet"]) {
    await sql`create table ${sql.id("upkeep", table)} (id int primary key, state text not null)`.execute(db);
    await sql`insert into ${sql.id("upkeep", table)} select g, 'new' from generate_series(1, 500) g`.execute(db);
  }
  // Every row of one table updated three times: 1,500 dead row versions; the other has 10.
  for (let round = 0; round < 3; round++) await sql`update upkeep.churned set state = ${`round ${round}`}`.execute(db);
  await sql`update upkeep.quiet set state = 'touched' where id <= 10`.execute(db);
}

describe("embedded PostgreSQL upkeep (PGlite has no autovacuum)", () => {
  it("vacuums the tables that are due and leaves the others", async () => {
    // An interval longer than the test: only the round it asks for runs.
    const pg = await EmbeddedPostgres.open({ upkeepIntervalMs: 3_600_000 });
    try {
      const { db } = pg.forSchema("upkeep");
      await tablesWithHistory(db);
      // 1,500 left behind, less the few a page prunes by itself when it fills.
      const before = await activityOf(db, "churned");
      expect(before.dead).toBeGreaterThan(1_000);
      expect(before.vacuums).toBe(0);

      expect(await pg.vacuumDueTables()).toContain("upkeep.churned");
      expect(await activityOf(db, "churned")).toEqual({ dead: 0, vacuums: 1 });
      expect((await activityOf(db, "quiet")).vacuums).toBe(0);
      // Nothing is due any more.
      expect(await pg.vacuumDueTables()).not.toContain("upkeep.churned");
      const rows = await sql<{ n: number }>`select count(*)::int as n from upkeep.churned where state = 'round 2'`.execute(db);
      expect(rows.rows).toEqual([{ n: 500 }]);
    } finally {
      await pg.close();
    }
  });

  it("runs by itself every interval, and a close waits for a round under way", async () => {
    const pg = await EmbeddedPostgres.open({ upkeepIntervalMs: 50 });
    let closed = false;
    try {
      const { db } = pg.forSchema("upkeep");
      await tablesWithHistory(db);
      const deadline = Date.now() + 10_000;
      let activity = await activityOf(db, "churned");
      while (activity.vacuums === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        activity = await activityOf(db, "churned");
      }
      expect(activity).toEqual({ dead: 0, vacuums: 1 });
      await pg.close();
      closed = true;
    } finally {
      if (!closed) await pg.close();
    }
  });

  it("checkpoints once the log since the last checkpoint reaches its limit, and then not again until it does", async () => {
    const pg = await EmbeddedPostgres.open({ upkeepIntervalMs: 3_600_000, checkpointWalBytes: 2 * 1024 * 1024 });
    try {
      const { db } = pg.forSchema("upkeep");
      const redo = async () => (await sql<{ lsn: string }>`select redo_lsn::text as lsn from pg_control_checkpoint()`.execute(db)).rows[0]?.lsn;
      await sql`create schema if not exists upkeep`.execute(db);
      await sql`create table upkeep.log (id serial primary key, data bytea not null)`.execute(db);
      const first = await redo();
      expect(await pg.checkpointIfDue()).toBe(false);
      // About 3 MiB of log: random bytes, which neither compress nor move out of line.
      for (let i = 0; i < 2_000; i++) await sql`insert into upkeep.log (data) values (${randomBytes(1_500)})`.execute(db);
      expect(await pg.checkpointIfDue()).toBe(true);
      const second = await redo();
      expect(second).not.toBe(first);
      expect(await pg.checkpointIfDue()).toBe(false);
      expect(await redo()).toBe(second);
      const rows = await sql<{ n: number }>`select count(*)::int as n from upkeep.log`.execute(db);
      expect(rows.rows).toEqual([{ n: 2_000 }]);
    } finally {
      await pg.close();
    }
  }, 60_000);

  // Two minutes at most: over 100 MiB of log written through the session, with other suites running alongside.
  it("keeps an on-disk database's log to a few segments, and what it wrote survives a reopen", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "c402-upkeep-"));
    try {
      const pg = await EmbeddedPostgres.open({ dataDir, upkeepIntervalMs: 3_600_000, checkpointWalBytes: 16 * 1024 * 1024 });
      try {
        const { db } = pg.forSchema("upkeep");
        await sql`create schema if not exists upkeep`.execute(db);
        await sql`create table upkeep.log (id serial primary key, data bytea not null)`.execute(db);
        // About 110 MiB of log, with the upkeep's round after every 8 MiB or so.
        for (let round = 0; round < 13; round++) {
          for (let i = 0; i < 1_000; i++) await sql`insert into upkeep.log (data) values (${randomBytes(8_000)})`.execute(db);
          await pg.checkpointIfDue();
        }
      } finally {
        await pg.close();
      }
      // Without checkpoints all of it stays: 8 segment files of 16 MiB. With them, no more than min_wal_size (80 MiB) keeps for reuse.
      const segments = readdirSync(join(dataDir, "pg_wal")).filter((f) => /^[0-9A-F]{24}$/.test(f));
      expect(segments.length).toBeLessThanOrEqual(5);
      const reopened = await EmbeddedPostgres.open({ dataDir, upkeepIntervalMs: 3_600_000 });
      try {
        const rows = await sql<{ n: number }>`select count(*)::int as n from upkeep.log`.execute(reopened.forSchema("upkeep").db);
        expect(rows.rows).toEqual([{ n: 13_000 }]);
      } finally {
        await reopened.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
