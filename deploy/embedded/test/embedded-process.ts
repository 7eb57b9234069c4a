import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { join, resolve } from "node:path";

const root = resolve(__dirname, "../../..");

/**
 * The process `npm start` runs, as the direct child (no tsx launcher in
 * between), so signals reach it as Kubernetes sends them; on loopback only,
 * logging warnings and worse, its devchain on a port the system picks (two
 * tests starting it at once would race for the default 8545), with `env` on top.
 */
export function spawnEmbeddedProcess(opts: { port: number; dataDir: string; env?: Record<string, string>; stdio: StdioOptions }): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", join(root, "deploy/embedded/src/main.ts")], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(opts.port),
      METRICS_PORT: "0",
      DATA_DIR: opts.dataDir,
      LOG_LEVEL: "warn",
      AUTH_RATE_LIMIT_PER_MINUTE: "1000",
      OUTBOUND_ALLOW_LOOPBACK: "true",
      OUTBOUND_RESOLVE_NAMES: "false",
      DEVCHAIN_PORT: "0",
      ...opts.env,
    },
    stdio: opts.stdio,
  });
}
