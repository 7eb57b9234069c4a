import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from "kysely";

/** One statement's answer: its rows, and the command the server ran with the rows it touched. */
export interface StatementResult<R> {
  rows: R[];
  affectedRows?: number;
  command?: string;
}

/** How the dialect runs one statement on the PGlite session (see PGliteStatements). */
export interface PGliteSession {
  query<R>(sql: string, params: readonly unknown[]): Promise<StatementResult<R>>;
}

/**
 * A kysely dialect over an in-process PGlite. PGlite has a single session, so
 * the driver hands out that one connection under a mutex: a transaction holds it
 * until commit or rollback, and every other query waits. Consequence for
 * callers: never wait on another service (an RPC) inside a transaction.
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGliteSession) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite);
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

class PGliteDriver implements Driver {
  private queue: Promise<void> = Promise.resolve();
  private release: (() => void) | null = null;
  private readonly connection: PGliteConnection;

  constructor(pglite: PGliteSession) {
    this.connection = new PGliteConnection(pglite);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise<void>((resolve) => (release = resolve));
    await previous;
    this.release = release;
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin"));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("commit"));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("rollback"));
  }

  async releaseConnection(): Promise<void> {
    const release = this.release;
    this.release = null;
    release?.();
  }

  async destroy(): Promise<void> {}
}

/** The commands whose completion counts the rows they touched. */
const ROW_COMMANDS = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pglite: PGliteSession) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.pglite.query<R>(compiled.sql, compiled.parameters);
    const affected = result.affectedRows;
    // By the command the server says it ran, as kysely's PostgreSQL driver does: `with … delete` is a DELETE.
    return {
      rows: result.rows,
      ...(affected !== undefined && ROW_COMMANDS.has(result.command ?? "") ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming is not supported by the PGlite dialect");
  }
}
