import { sql, type Kysely } from "kysely";

/** A table's counts as `pg_stat_user_tables` keeps them. */
export interface TableActivity {
  schema: string;
  table: string;
  liveRows: number;
  deadRows: number;
  insertedSinceVacuum: number;
}

/**
 * When a table is due: PostgreSQL's autovacuum rules at their defaults (dead
 * rows over 50 + 20% of the live ones; rows inserted since the last vacuum over
 * 1,000 + 20%, so an insert-only table's pages are marked all-visible a part at
 * a time rather than all at once by the first vacuum after years), with one
 * addition: never more than 1,000 dead rows. A queue-like table (an outbox, the
 * bus, webhook deliveries) keeps its history, so 20% of it is thousands of rows
 * that each of its scans steps over: the outbox relay's lease took 2.5 ms
 * after 3,400 paid rehearsals without vacuum and about 0.3 ms with it.
 */
export function vacuumDue(t: TableActivity): boolean {
  return t.deadRows > Math.min(50 + 0.2 * t.liveRows, 1_000) || t.insertedSinceVacuum > 1_000 + 0.2 * t.liveRows;
}

/** The write-ahead log written since the last checkpoint began, and how long ago it completed. */
export interface WalSinceCheckpoint {
  bytes: number;
  seconds: number;
}

/** What a checkpoint's own records add to the log: below it, nothing was written since. */
const CHECKPOINT_RECORDS_BYTES = 64 * 1024;

/**
 * When a checkpoint is due: the checkpointer's rules (PostgreSQL's
 * checkpoint_timeout, 5 minutes, when anything was written since the last
 * one; sooner once `maxWalBytes` of log were written), with a smaller log than
 * max_wal_size's 1 GB: the embedded log is kept in memory by a `:memory:`
 * install, and replayed from the last checkpoint by a restart.
 */
export function checkpointDue(wal: WalSinceCheckpoint, limits: { maxWalBytes: number; timeoutSeconds: number }): boolean {
  return wal.bytes >= limits.maxWalBytes || (wal.seconds >= limits.timeoutSeconds && wal.bytes > CHECKPOINT_RECORDS_BYTES);
}

/** 64 MiB of log (four segments) between checkpoints at most: a checkpoint every 30-60 s at the embedded paid path's full rate, 20-30 ms each. */
export const CHECKPOINT_WAL_BYTES = 64 * 1024 * 1024;
export const CHECKPOINT_TIMEOUT_SECONDS = 300;

/**
 * The background workers the embedded database lacks. PGlite runs PostgreSQL
 * as a single session with no background processes, so nothing else ever
 * vacuums or checkpoints it.
 * - Vacuum: every row an update or delete leaves behind would stay in its
 *   table and indexes for good, and a long-running embedded install would slow
 *   down with every event it ever handled. Each round reads the tables' counts
 *   and vacuums those due (vacuumDue), one at a time between other statements:
 *   the single session waits for each, a few milliseconds for a table whose old
 *   pages are all-visible. Not ANALYZE: plans stay as they were, estimated from
 *   the table sizes that vacuum keeps current.
 * - Checkpoint: without one, the log grows segment by segment (16 MiB each,
 *   never recycled) until max_wal_size forces a checkpoint inside whatever
 *   statement crossed it, a `:memory:` install holds all of it, and a restart
 *   replays all of it. Each round checks the log since the last checkpoint and
 *   runs one when checkpointDue says so.
 */
export class EmbeddedUpkeep {
  private timer?: NodeJS.Timeout;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = true;

  constructor(
    private readonly db: Kysely<any>,
    private readonly opts: { intervalMs?: number; checkpointWalBytes?: number; onError?: (err: unknown) => void } = {},
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  /** One round: vacuums every table that is due, then checkpoints if one is. */
  async runOnce(): Promise<void> {
    await this.vacuumDueTables();
    if (!this.stopped) await this.checkpointIfDue();
  }

  /** Vacuums every table that is due; answers them as `schema.table`. */
  async vacuumDueTables(): Promise<string[]> {
    const { rows } = await sql<TableActivity>`
      select schemaname as "schema", relname as "table", n_live_tup::float8 as "liveRows",
             n_dead_tup::float8 as "deadRows", n_ins_since_vacuum::float8 as "insertedSinceVacuum"
      from pg_stat_user_tables order by n_dead_tup desc`.execute(this.db);
    const vacuumed: string[] = [];
    for (const table of rows.filter(vacuumDue)) {
      if (this.stopped) break;
      await sql`vacuum ${sql.id(table.schema, table.table)}`.execute(this.db);
      vacuumed.push(`${table.schema}.${table.table}`);
    }
    return vacuumed;
  }

  /** Checkpoints when one is due (checkpointDue); answers whether it did. */
  async checkpointIfDue(): Promise<boolean> {
    const { rows } = await sql<WalSinceCheckpoint>`
      select pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::float8 as "bytes",
             extract(epoch from now() - checkpoint_time)::float8 as "seconds"
      from pg_control_checkpoint()`.execute(this.db);
    const wal = rows[0];
    const limits = { maxWalBytes: this.opts.checkpointWalBytes ?? CHECKPOINT_WAL_BYTES, timeoutSeconds: CHECKPOINT_TIMEOUT_SECONDS };
    if (!wal || !checkpointDue(wal, limits)) return false;
    await sql`checkpoint`.execute(this.db);
    return true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .catch((err: unknown) => this.opts.onError?.(err))
        .finally(() => this.schedule());
    }, this.opts.intervalMs ?? 1_000);
    // A database left open must not keep a process alive for its upkeep.
    this.timer.unref();
  }
}
