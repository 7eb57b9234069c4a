import { resolve } from "node:path";
import type { FailpointName } from "@c402/failpoints";
import { resultLine, runScriptProcess, type ScriptExit } from "@c402/testkit";
import type { LiveChainSettings } from "../../src";

/** The JSON argument of test/fixtures/held-charge-process.ts. */
export type HeldChargeInput = { databaseUrl: string; schema: string; chain: LiveChainSettings; subjectSecret: string } & (
  { mode: "charge"; scheduleId: string; period: number } | { mode: "recover" }
);

export const HELD_CHARGE_RESULT = "HELD_CHARGE_RESULT ";

const DRIVER = resolve(__dirname, "../fixtures/held-charge-process.ts");

/** Runs the held-charge process with `failpoint` armed if given. */
export async function runHeldChargeProcess(
  input: HeldChargeInput,
  failpoint?: FailpointName,
): Promise<Omit<ScriptExit, "stdout"> & { result?: Record<string, unknown> }> {
  const { stdout, ...exit } = await runScriptProcess(DRIVER, input, { ...(failpoint ? { failpoint } : {}), timeoutMs: 60_000 });
  const result = resultLine<Record<string, unknown>>(stdout, HELD_CHARGE_RESULT);
  return { ...exit, ...(result ? { result } : {}) };
}
