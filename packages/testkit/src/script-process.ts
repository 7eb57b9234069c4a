import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { FAILPOINT_ENV, type FailpointName, type ThreadFailpointName } from "@c402/failpoints";

export interface ScriptExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Spawn to exit, startup included. */
  wallMs: number;
}

const REPO_ROOT = resolve(__dirname, "../../..");

/**
 * Runs a TypeScript script in a process of its own, with one JSON argument
 * and `failpoint` armed if given (the kill -9 tests). It runs as
 * `node --import tsx` rather than through the tsx CLI: the CLI runs the
 * script in a second process and turns its SIGKILL into exit code 137, while
 * the test must see the signal itself. A script that outlives `timeoutMs` is
 * killed and says so in its stderr.
 */
export function runScriptProcess(
  script: string,
  input: unknown,
  opts: { failpoint?: FailpointName | ThreadFailpointName; timeoutMs?: number } = {},
): Promise<ScriptExit> {
  const env = { ...process.env };
  delete env[FAILPOINT_ENV];
  if (opts.failpoint) env[FAILPOINT_ENV] = opts.failpoint;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", script, JSON.stringify(input)], { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => {
    stderr += `\n(killed by the test after ${timeoutMs} ms)`;
    child.kill("SIGKILL");
  }, timeoutMs);
  return new Promise((resolveExit, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolveExit({ code, signal, stdout, stderr, wallMs: Math.round(performance.now() - started) });
    });
  });
}

/** The JSON a script printed on its line starting with `prefix`, if it got that far. */
export function resultLine<T>(stdout: string, prefix: string): T | undefined {
  const line = stdout.split("\n").find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : (JSON.parse(line.slice(prefix.length)) as T);
}
