import { mkdirSync } from "node:fs";
import { dbStatements } from "@c402/metrics";
import { currentContext } from "@c402/request-context";
import { recordSpan, SpanKind, tracingEnabled } from "@c402/tracing";
import { Kysely, PostgresDialect, sql, type LogEvent, type Migration } from "kysely";
import { Migrator } from "kysely";
import pg from "pg";
import { reportingConnectionFailures } from "./connection-failures";
import { usePreparedStatements } from "./prepared-statements";
import { EmbeddedUpkeep } from "./embedded-upkeep";
import { PGliteDialect } from "./pglite-dialect";
import { PGliteThread } from "./pglite-thread-session";

export { sql, type ExpressionBuilder, type Kysely, type Migration, type QueryCreator } from "kysely";
export { PGliteDialect } from "./pglite-dialect";
export { reusableStatement } from "./reusable-statement";

/**
 * The database a service sees: a kysely instance whose every table reference is
 * placed in the service's own schema. The service cannot tell whether it runs
 * on PostgreSQL or on the embedded PGlite.
 */
export interface ServiceDatabase<DB = any> {
  readonly db: Kysely<DB>;
  readonly schema: string;
  ping(): Promise<void>;
  close(): Promise<void>;
}

const SCHEMA_NAME = /^[a-z][a-z0-9_]{0,62}$/;

function assertSchema(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name: ${schema}`);
}

/**
 * Each statement, once kysely reports it finished: counted (c402_db_statements_total,
 * what the benchmark divides by the payments it made), and a span of the request
 * (or background round) it serves when tracing is on. Statements outside any
 * trace (an outbox relay or bus polling an empty table) are not spans, or
 * every poll would be a trace of its own.
 */
function observeStatement(event: LogEvent): void {
  const text = event.query.sql;
  const context = currentContext();
  dbStatements.inc({ schema: schemaOf(text), operation: operationOf(text), origin: context?.requestId ? "request" : "background" });
  if (!tracingEnabled() || !context?.traceparent) return;
  const endTime = Date.now();
  recordSpan(operationOf(text), {
    kind: SpanKind.CLIENT,
    startTime: endTime - event.queryDurationMillis,
    endTime,
    // The statement with its placeholders, never its parameters (they carry payloads and addresses).
    attributes: { "db.system.name": "postgresql", "db.query.text": text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text },
    ...(event.level === "error" ? { error: event.error } : {}),
  });
}

/**
 * The schema of the first table a statement reads or writes (kysely writes
 * `from "schema"."table"`), or `other`; a CTE's columns (`"cte"."column"`) are not tables.
 */
function schemaOf(text: string): string {
  return /\b(?:from|join|into|update)\s+"([a-z][a-z0-9_]{0,62})"\."/i.exec(text)?.[1] ?? "other";
}

/** The span name of a statement: its leading keyword (select, insert, update, delete, with, …). */
function operationOf(text: string): string {
  return /^\s*([a-zA-Z]+)/.exec(text)?.[1]?.toLowerCase() ?? "query";
}

// int8 → bigint, numeric stays text: money never passes through a float.
pg.types.setTypeParser(20, (v: string) => BigInt(v));

/** A PostgreSQL pool for one service; `search_path` is pinned to its schema. */
export function openPostgres<DB = any>(opts: { url: string; schema: string; maxConnections?: number }): ServiceDatabase<DB> {
  assertSchema(opts.schema);
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.maxConnections ?? 10,
    options: `-c search_path=${opts.schema}`,
  });
  usePreparedStatements(pool);
  const root = new Kysely<DB>({ dialect: new PostgresDialect({ pool: reportingConnectionFailures(pool) }), log: observeStatement });
  const db = root.withSchema(opts.schema);
  return {
    db,
    schema: opts.schema,
    ping: async () => {
      await sql`select 1`.execute(root);
    },
    close: () => root.destroy(),
  };
}

/**
 * The embedded PostgreSQL (PGlite, WebAssembly) shared by every service of one
 * embedded process, each in its own schema. Data persists under `dataDir`;
 * omit it for an in-memory database (tests).
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly pglite: { close(): Promise<void> },
    private readonly root: Kysely<any>,
    private readonly upkeep: EmbeddedUpkeep,
  ) {}

  /**
   * `onUpkeepError` hears a failed round of the database's upkeep (EmbeddedUpkeep:
   * vacuum and checkpoints; the next round tries again); `upkeepIntervalMs` is how
   * often it looks (1 s); `checkpointWalBytes`, how much log a checkpoint follows (64 MiB).
   * `onLost` hears, once, that the database's thread ended without being closed: every
   * statement fails from then on (PGliteThread.open).
   */
  static async open(
    opts: {
      dataDir?: string;
      upkeepIntervalMs?: number;
      checkpointWalBytes?: number;
      onUpkeepError?: (err: unknown) => void;
      onLost?: (reason: Error) => void;
    } = {},
  ): Promise<EmbeddedPostgres> {
    if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
    const pglite = await PGliteThread.open(opts.dataDir, opts.onLost);
    const root = new Kysely<any>({ dialect: new PGliteDialect(pglite), log: observeStatement });
    const upkeep = new EmbeddedUpkeep(root, { intervalMs: opts.upkeepIntervalMs, checkpointWalBytes: opts.checkpointWalBytes, onError: opts.onUpkeepError });
    upkeep.start();
    return new EmbeddedPostgres(pglite, root, upkeep);
  }

  forSchema<DB = any>(schema: string): ServiceDatabase<DB> {
    assertSchema(schema);
    return {
      db: this.root.withSchema(schema) as Kysely<DB>,
      schema,
      ping: async () => {
        await sql`select 1`.execute(this.root);
      },
      // The shared instance is closed once, by its owner.
      close: async () => {},
    };
  }

  /** Vacuums every table that is due now (what the upkeep does every interval); answers them as `schema.table`. */
  vacuumDueTables(): Promise<string[]> {
    return this.upkeep.vacuumDueTables();
  }

  /** Checkpoints if one is due now (what the upkeep does every interval, after vacuuming); answers whether it did. */
  checkpointIfDue(): Promise<boolean> {
    return this.upkeep.checkpointIfDue();
  }

  async close(): Promise<void> {
    await this.upkeep.stop();
    await this.root.destroy();
    await this.pglite.close();
  }
}

/** PostgreSQL's unique_violation (SQLSTATE 23505), on either driver: a concurrent insert of the same key won. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "23505";
}

export type MigrationSet = Record<string, Migration>;

/**
 * Brings the service's schema up to date with kysely's Migrator. The
 * bookkeeping tables live inside the service's schema.
 */
export async function migrate(database: ServiceDatabase, migrations: MigrationSet): Promise<void> {
  // Provisioned deployments create the schema for the service's role; create it only when missing.
  const exists = await sql<{ n: number }>`select 1 as n from information_schema.schemata where schema_name = ${database.schema}`.execute(database.db);
  if (exists.rows.length === 0) await sql`create schema if not exists ${sql.id(database.schema)}`.execute(database.db);
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: database.schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    throw new Error(`migration of schema ${database.schema} failed${failed ? ` at ${failed.migrationName}` : ""}: ${String(error)}`);
  }
}
