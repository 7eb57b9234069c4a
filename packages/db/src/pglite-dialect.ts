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
 * A kysely dialect over PGlite's single session (PGliteThread: on a thread of
 * its own). A statement outside a transaction is sent at once and the session
 * answers statements in the order they were sent, so many are in flight
 * together; a transaction has the session to itself from begin to commit or
 * rollback, every other statement held back until it ends. Consequence for
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

/** Who may send statements now: everyone, or the one transaction that holds the session. */
class SessionTurns {
  private last: Promise<void> = Promise.resolve();
  private held = 0;

  /** Waits for every transaction that took its turn before; answers the release of this one. */
  async take(): Promise<() => void> {
    const before = this.last;
    let release!: () => void;
    this.last = new Promise<void>((resolve) => (release = resolve));
    this.held++;
    await before;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
      release();
    };
  }

  /** Resolves once no transaction holds the session or waits for it (at once when none does). */
  clear(): Promise<void> | undefined {
    if (this.held === 0) return undefined;
    return this.drain();
  }

  private async drain(): Promise<void> {
    while (this.held > 0) await this.last;
  }
}

class PGliteDriver implements Driver {
  private readonly turns = new SessionTurns();

  constructor(private readonly pglite: PGliteSession) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new PGliteConnection(this.pglite, this.turns);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const conn = connection as PGliteConnection;
    conn.release = await this.turns.take();
    await conn.executeQuery(CompiledQuery.raw("begin"));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await this.end(connection as PGliteConnection, "commit");
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await this.end(connection as PGliteConnection, "rollback");
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    // A transaction whose begin failed still holds its turn.
    (connection as PGliteConnection).release?.();
  }

  async destroy(): Promise<void> {}

  private async end(conn: PGliteConnection, command: "commit" | "rollback"): Promise<void> {
    try {
      await conn.executeQuery(CompiledQuery.raw(command));
    } finally {
      conn.release?.();
      conn.release = undefined;
    }
  }
}

/** The commands whose completion counts the rows they touched. */
const ROW_COMMANDS = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

class PGliteConnection implements DatabaseConnection {
  /** Set while this connection's transaction holds the session. */
  release: (() => void) | undefined;

  constructor(
    private readonly pglite: PGliteSession,
    private readonly turns: SessionTurns,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const turn = this.release ? undefined : this.turns.clear();
    if (turn) await turn;
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
