import { DependencyUnavailableError } from "@c402/problems";
import type { PostgresPool } from "kysely";
import type pg from "pg";

/**
 * SQLSTATEs of a server that cannot take the statement for reasons of its own:
 * class 08 (connection exception), 57P01–57P03 (shut down by an administrator,
 * crashed, still starting) and 53300 (too many connections).
 */
const SERVER_GOING_AWAY = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;

/** Node's socket errors: the server cannot be reached, or dropped the connection. */
const SOCKET_FAILURES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);

/** pg's own words for a connection that went away or never came, and for a pool already ended (a process shutting down). */
const CLIENT_FAILURES = [/^Connection terminated/, /^timeout exceeded when trying to connect/, /is not queryable$/, /^Cannot use a pool after calling end/];

/** Whether a PostgreSQL client's error says the database is unreachable (not that the statement was refused). */
export function isConnectionFailure(err: unknown): boolean {
  // Not `instanceof Error`: a socket's error is made by Node's own realm, which a test's sandbox does not share.
  if (typeof err !== "object" || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === "string" && (SERVER_GOING_AWAY.test(code) || SOCKET_FAILURES.has(code))) return true;
  return typeof message === "string" && CLIENT_FAILURES.some((words) => words.test(message));
}

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

function unavailableIfConnectionFailure(err: unknown): never {
  if (isConnectionFailure(err)) throw new DependencyUnavailableError("The database could not be reached.", err);
  throw err;
}

/**
 * The pool as kysely sees it, with the database's outages as
 * DependencyUnavailableError (answered 503 with Retry-After, not 500): a
 * connection that cannot be made, and a statement whose connection is lost
 * under it. A refused statement (a constraint, a serialization failure) stays
 * the server's own error. Neither kind of loss ends the process.
 */
export function reportingConnectionFailures(pool: pg.Pool): PostgresPool {
  // A connection lost while its client is idle: the pool drops the client and emits 'error', which
  // with no listener would end the process (a restarted server).
  pool.on("error", () => {});
  pool.on("connect", (client: pg.PoolClient) => {
    // Lost while its client is checked out: the statement fails (below), and the client emits 'error'
    // itself, heard by nobody else (the pool listens only while it is idle). The pool drops the dead
    // client when it is released.
    client.on("error", () => {});
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: typeof query }).query = (...args) => {
      const answer = query(...args);
      // A promise for a statement; a submittable (a cursor) answers through its own events.
      return isPromise(answer) ? answer.then(undefined, unavailableIfConnectionFailure) : answer;
    };
  });
  return {
    connect: () => pool.connect().catch(unavailableIfConnectionFailure),
    end: () => pool.end(),
  };
}
