import type pg from "pg";

/** The server dropped or outgrew a prepared statement (its table changed shape, or the session was reset): prepare it again. */
export const STALE_STATEMENT = new Set(["0A000", "26000"]);

/** Texts of the hot path's statements (reusableStatement's), with the name each is prepared under on PostgreSQL. */
const names = new Map<string, string>();
/** A bound, whatever happens: reusableStatement keeps a few shapes of a few statements. */
const MAX_NAMED = 256;

/** Marks a statement text as one of the hot path's: on PostgreSQL it runs as a named prepared statement. */
export function prepareOnPostgres(text: string): void {
  if (!names.has(text) && names.size < MAX_NAMED) names.set(text, `c402_${names.size + 1}`);
}

type QueryFn = (...args: unknown[]) => Promise<unknown>;

/**
 * Makes each connection of a PostgreSQL pool run the hot path's statements
 * (prepareOnPostgres) as named prepared statements: kysely sends every
 * statement unnamed, so PostgreSQL parsed, analysed and planned the same few
 * texts on every request (issue 16: prepared, its CPU per paid request fell by
 * a quarter). Everything else runs as before.
 *
 * A prepared statement outlives a change to its table; when its result no
 * longer fits (a column added under `returning *`, say), the server refuses it
 * once: the connection then prepares its statements under new names and, outside
 * a transaction, runs the statement again. Inside one the refusal stands (the
 * transaction is aborted), as any failed statement's does.
 */
export function usePreparedStatements(pool: pg.Pool): void {
  pool.on("connect", (client: pg.PoolClient) => {
    const query = client.query.bind(client) as QueryFn;
    /** Bumped when the server refuses a prepared statement: the next are prepared afresh. */
    let generation = 0;
    (client as unknown as { query: QueryFn }).query = (text: unknown, values?: unknown, callback?: unknown) => {
      if (typeof text !== "string" || callback !== undefined || typeof values === "function") return query(text, values, callback);
      const name = names.get(text);
      if (!name) return query(text, values);
      const run = () => query({ name: `${name}_${generation}`, text, values });
      return run().catch((err: unknown) => {
        if (!STALE_STATEMENT.has((err as { code?: string }).code ?? "")) throw err;
        generation++;
        // The server's own word after the refusal: idle ("I"), or in a transaction it has aborted.
        if (client.getTransactionStatus() !== "I") throw err;
        return run();
      });
    };
  });
}
