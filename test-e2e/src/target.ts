import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { callingProcesses, rpcTokenKey } from "@c402/topology";
import { ExitedBeforeHealthy, waitUntilHealthy } from "../../deploy/local/src/health-wait";
import { freePort } from "../../deploy/local/src/ports";

const root = resolve(__dirname, "../..");

/**
 * Calls to sellers' URLs in both modes: the fake origins and MCP servers of
 * the tests listen on loopback (as a developer's would), and no name is looked
 * up in DNS, so nothing a test (or the fuzzer) sends reaches past this machine.
 */
const SEALED_OUTBOUND = { OUTBOUND_ALLOW_LOOPBACK: "true", OUTBOUND_RESOLVE_NAMES: "false" };

export type Mode = "embedded" | "distributed";

export interface Target {
  baseUrl: string;
  /** The target's DATA_DIR: sign-in mails are written under <dataDir>/mail/ (no SMTP_URL in tests). */
  dataDir: string;
  /**
   * Everything the target writes: its output (target-output.log), the services'
   * log files (distributed mode) and, inside, the data directory (embedded mode:
   * the database's files too). The secret-leak scan (G25) reads all of it.
   */
  logsDir: string;
  /** Where each process serves its Prometheus metrics: "embedded", or each service and "gateway" (distributed). */
  metricsUrls: Record<string, string>;
  /** Distributed mode: each gRPC service's host:port, and the RPC token of each process that calls others (given to the runner). */
  grpc: { addresses: Record<string, string>; tokens: Record<string, string> };
  /** Stops every process; rejects, naming them, when any tried an address outside loopback (G20). */
  stop(): Promise<void>;
}

/**
 * Starts the whole service as a black box and waits until every component is
 * healthy. The gateway's port is picked free first and bound seconds later, so
 * another socket (even one of the target's own outgoing connections) can take
 * it meanwhile: a target that exits before it is healthy is started again on
 * another port, up to three times.
 */
export async function startTarget(mode: Mode, extraEnv: Record<string, string> = {}): Promise<Target> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startTargetOnce(mode, attempt === 3, extraEnv);
    } catch (err) {
      if (attempt === 3 || !(err instanceof ExitedBeforeHealthy)) throw err;
      process.stderr.write(`e2e target exited before it was healthy (attempt ${attempt}); starting it again on another port\n`);
    }
  }
}

async function startTargetOnce(mode: Mode, lastAttempt: boolean, extraEnv: Record<string, string>): Promise<Target> {
  const port = await freePort();
  const metricsUrls: Record<string, string> = {};
  const grpc: Target["grpc"] = { addresses: {}, tokens: {} };
  const baseUrl = `http://127.0.0.1:${port}`;
  const tsx = join(root, "node_modules/.bin/tsx");
  const logs = mkdtempSync(join(tmpdir(), `c402-e2e-${mode}-`));
  // Both modes keep their data (embedded: the database too; both: the .eml sign-in mails) under one directory the tests can read.
  const dataDir = join(logs, "data");
  // G20 in the target's processes (and the children the runner starts, which inherit the environment).
  const nonLoopbackLog = join(logs, "non-loopback.log");
  const WITNESSED = {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${join(root, "packages/testkit/bin/loopback-witness.cjs")}`.trim(),
    C402_NON_LOOPBACK_LOG: nonLoopbackLog,
  };
  let child: ChildProcess;
  let cleanup = async () => {};
  // Distributed mode: resolved once the runner printed its processes' ports (it does once all are healthy).
  let portsKnown: Promise<void> = Promise.resolve();
  if (mode === "embedded") {
    const metricsPort = await freePort();
    metricsUrls.embedded = `http://127.0.0.1:${metricsPort}`;
    child = spawn(tsx, [join(root, "deploy/embedded/src/main.ts")], {
      env: {
        ...process.env,
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        DATA_DIR: dataDir,
        LOG_LEVEL: "warn",
        AUTH_RATE_LIMIT_PER_MINUTE: "1000",
        // A rehearsal series' day lasts 6 s here: a test-face series runs in seconds, with room for a loaded machine.
        SCHEDULE_REHEARSAL_DAY_SECONDS: "6",
        ...SEALED_OUTBOUND,
        ...WITNESSED,
        ...extraEnv,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
  } else {
    const database = `c402_e2e_${randomBytes(4).toString("hex")}`;
    // The runner takes each process's RPC token from <NAME>_RPC_TOKEN: known here, so a test can call a service as one of them.
    for (const name of callingProcesses()) grpc.tokens[name] = randomBytes(32).toString("hex");
    const adminUrl = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
    child = spawn(tsx, [join(root, "deploy/local/src/run.ts")], {
      env: {
        ...process.env,
        PORT: String(port),
        POSTGRES_ADMIN_URL: adminUrl,
        C402_DATABASE: database,
        KAFKA_BROKERS: process.env.TEST_KAFKA_BROKERS ?? "127.0.0.1:19092",
        REDIS_URL: process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379",
        LOG_LEVEL: "warn",
        LOG_DIR: logs,
        DATA_DIR: dataDir,
        AUTH_RATE_LIMIT_PER_MINUTE: "1000",
        // A rehearsal series' day lasts 6 s here: a test-face series runs in seconds, with room for a loaded machine.
        SCHEDULE_REHEARSAL_DAY_SECONDS: "6",
        ...SEALED_OUTBOUND,
        ...WITNESSED,
        ...Object.fromEntries(Object.entries(grpc.tokens).map(([name, token]) => [rpcTokenKey(name), token])),
        ...extraEnv,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    // The runner names each process's metrics port in its first line.
    let firstLines = "";
    let portsRead!: () => void;
    portsKnown = new Promise((r) => (portsRead = r));
    const readPorts = (chunk: Buffer) => {
      firstLines += chunk.toString("utf8");
      const match = /metrics (\{[^\n]*\})/.exec(firstLines);
      if (!match) return;
      child.stdout?.off("data", readPorts);
      const services = /services (\{[^}]*\})/.exec(firstLines);
      for (const [name, p] of Object.entries(JSON.parse(services?.[1] ?? "{}") as Record<string, number>)) grpc.addresses[name] = `127.0.0.1:${p}`;
      for (const [name, p] of Object.entries(JSON.parse(match[1] as string) as Record<string, number>)) metricsUrls[name] = `http://127.0.0.1:${p}`;
      portsRead();
    };
    child.stdout?.on("data", readPorts);
    cleanup = async () => {
      const { dropDatabase } = await import("../../deploy/local/src/provision");
      await dropDatabase(adminUrl, database).catch(() => undefined);
    };
  }
  // The output goes to this run's output as before, and to a file the secret-leak scan reads.
  const output = createWriteStream(join(logs, "target-output.log"));
  child.stdout?.on("data", (chunk: Buffer) => {
    process.stdout.write(chunk);
    output.write(chunk);
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    process.stderr.write(chunk);
    output.write(chunk);
  });
  const stop = async (keepLogs = false) => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => {
        const t = setTimeout(() => {
          child.kill("SIGKILL");
          r(null);
        }, 10_000);
        child.once("exit", () => {
          clearTimeout(t);
          r(null);
        });
      });
    }
    await cleanup();
    await new Promise((r) => output.end(r));
    const leftLoopback = existsSync(nonLoopbackLog) ? readFileSync(nonLoopbackLog, "utf8").trim() : "";
    if (!keepLogs) rmSync(logs, { recursive: true, force: true });
    if (leftLoopback) throw new Error(`the target tried addresses outside loopback (G20):\n${leftLoopback}`);
  };
  try {
    await waitUntilHealthy(baseUrl, child, 120_000, { deep: true });
    await Promise.race([portsKnown, new Promise((_, reject) => setTimeout(() => reject(new Error("the runner never printed its ports")), 30_000).unref())]);
  } catch (err) {
    const keep = lastAttempt || !(err instanceof ExitedBeforeHealthy);
    if (keep) process.stderr.write(`e2e target logs kept in ${logs}\n`);
    await stop(keep).catch(() => undefined);
    throw err;
  }
  return { baseUrl, dataDir, logsDir: logs, metricsUrls, grpc, stop: () => stop() };
}
