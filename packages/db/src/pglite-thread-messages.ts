import type { StatementResult } from "./pglite-dialect";

/** What the main thread asks the database thread. */
export type ThreadRequest = { kind: "query"; id: number; sql: string; params: readonly unknown[] } | { kind: "close" };

/** What the database thread answers: once `ready` (or `failed`), then one `result` or `error` per query, `closed` last. */
export type ThreadReply =
  | { kind: "ready" }
  | { kind: "failed"; error: ThreadError }
  | { kind: "result"; id: number; result: StatementResult<unknown> }
  | { kind: "error"; id: number; error: ThreadError }
  | { kind: "closed" };

/** An error as it crosses threads: its message and its own fields (a server error's code, detail, constraint, …). */
export interface ThreadError {
  message: string;
  fields: Record<string, string | number | boolean>;
}

/**
 * An error's message and own scalar fields. Structured cloning keeps an
 * Error's message but drops the fields callers branch on (PostgreSQL's SQLSTATE
 * `code` above all), so they are carried explicitly.
 */
export function describeThreadError(err: unknown): ThreadError {
  if (!(err instanceof Error)) return { message: String(err), fields: {} };
  const fields: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(err)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") fields[key] = value;
  }
  return { message: err.message, fields };
}

/** The error again, on the calling thread: its stack is the caller's, its fields the original's. */
export function threadErrorToError(error: ThreadError): Error {
  return Object.assign(new Error(error.message), error.fields);
}
