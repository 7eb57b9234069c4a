import { writeSync } from "node:fs";
import { isMainThread } from "node:worker_threads";

/**
 * Crash failpoints for the kill -9 recovery tests: a named spot where the
 * process may die (the settle saga's steps, target G6; an idempotent create's
 * claim and commit, target G4). When the environment
 * variable C402_FAILPOINT names the spot, the process sends itself SIGKILL
 * right there, so nothing after it runs: no catch or finally, no exit
 * handlers, no buffered writes, like a power cut or the OOM killer.
 *
 * Production never sets the variable. It is read once, at module load, so a
 * failpoint costs one string comparison.
 */
export const SETTLE_FAILPOINTS = ["after-claim", "after-sign", "after-broadcast", "after-receipt", "after-ledger-commit", "after-outbox-publish"] as const;
/** An idempotent create: its key claimed, before any call to another service; its checkout committed, before the answer. */
export const CREATE_FAILPOINTS = ["create-after-key-claim", "create-after-commit"] as const;
/**
 * A relay sale (paid only on delivery, ADR 9): the origin answered (recorded by fulfillment, not yet
 * on the payment), and its outcome recorded on the payment (nothing broadcast yet).
 */
export const DELIVERY_FAILPOINTS = ["after-origin-answer", "after-delivery"] as const;
/** A package call: its allowance taken and the call recorded under way, the origin not called yet. */
export const PACKAGE_FAILPOINTS = ["package-call-started"] as const;
/**
 * The embedded database's thread (PGliteThread): the thread ends, its process lives on; as it receives
 * its first statement (while the process starts), or the first that records a payment (while it serves).
 */
export const THREAD_FAILPOINTS = ["database-thread-exit", "database-thread-exit-at-payment"] as const;
export const FAILPOINT_NAMES = [...SETTLE_FAILPOINTS, ...CREATE_FAILPOINTS, ...DELIVERY_FAILPOINTS, ...PACKAGE_FAILPOINTS, ...THREAD_FAILPOINTS] as const;

export type FailpointName = Exclude<(typeof FAILPOINT_NAMES)[number], ThreadFailpointName>;
export type ThreadFailpointName = (typeof THREAD_FAILPOINTS)[number];

export const FAILPOINT_ENV = "C402_FAILPOINT";

const armed = process.env[FAILPOINT_ENV] || undefined;
// A misspelt name would never fire and the crash test would pass vacuously.
if (armed !== undefined && !(FAILPOINT_NAMES as readonly string[]).includes(armed)) {
  throw new Error(`${FAILPOINT_ENV}=${armed} is not a failpoint (known: ${FAILPOINT_NAMES.join(", ")})`);
}

export function failpoint(name: FailpointName): void {
  if (armed !== name) return;
  // writeSync: the line must be out before the kill, and stderr may be an asynchronous pipe.
  writeSync(2, `failpoint ${name}: SIGKILL\n`);
  // SIGKILL to oneself is delivered before kill(2) returns.
  process.kill(process.pid, "SIGKILL");
}

/**
 * A spot where a worker thread may die while its process lives on, as after an
 * uncaught error or the thread running out of memory: the thread exits right
 * there (process.exit in a worker ends that thread only).
 */
export function threadFailpoint(name: ThreadFailpointName): void {
  if (!threadFailpointArmed(name)) return;
  if (isMainThread) throw new Error(`failpoint ${name} is for a worker thread`);
  writeSync(2, `failpoint ${name}: thread exit\n`);
  process.exit(70);
}

/** Whether this thread failpoint is armed: for a spot whose condition costs more than a comparison to check. */
export function threadFailpointArmed(name: ThreadFailpointName): boolean {
  return armed === name;
}
