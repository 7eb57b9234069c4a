import { writeSync } from "node:fs";

/**
 * Crash failpoints for the kill -9 recovery test (reliability target G6): a
 * named spot in a saga where the process may die. When the environment
 * variable C402_FAILPOINT names the spot, the process sends itself SIGKILL
 * right there, so nothing after it runs: no catch or finally, no exit
 * handlers, no buffered writes, like a power cut or the OOM killer.
 *
 * Production never sets the variable. It is read once, at module load, so a
 * failpoint costs one string comparison.
 */
export const FAILPOINT_NAMES = ["after-claim", "after-sign", "after-broadcast", "after-receipt", "after-ledger-commit", "after-outbox-publish"] as const;

export type FailpointName = (typeof FAILPOINT_NAMES)[number];

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
