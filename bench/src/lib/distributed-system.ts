/**
 * The distributed system for a benchmark (webhooks.ts, paid.ts): deploy/local/src/run.ts
 * (every service its own process, PostgreSQL, Kafka, Redis) on a fresh database, started as a
 * process group of its own so that none of its processes outlives the run, and that database
 * dropped afterwards.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { join, resolve } from "node:path";
import { ExitedBeforeHealthy, waitUntilHealthy } from "../../../deploy/local/src/health-wait";
import { freePort } from "../../../deploy/local/src/ports";
export { dropDatabase } from "../../../deploy/local/src/provision";
import { log } from "./report";

const root = resolve(__dirname, "../../..");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Where the benchmarks find PostgreSQL, Kafka and Redis: BENCH_POSTGRES_URL, BENCH_KAFKA_BROKERS, BENCH_REDIS_URL, or this machine's defaults. */
export const BENCH_INFRASTRUCTURE = {
  postgres: process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  kafka: process.env.BENCH_KAFKA_BROKERS ?? "127.0.0.1:19092",
  redis: process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379",
};

export interface SystemSettings {
  postgres: string;
  kafka: string;
  redis: string;
  logLevel: string;
  /** Every process writes a V8 CPU profile there (through ./cpu-profile.cjs): of its whole life when it stops, or with `cpuProfWindow` of the window between two `System.toggleProfiles()`. */
  cpuProfDir?: string | undefined;
  cpuProfWindow?: boolean;
  /** Processes of each service and of the gateway (run.ts's REPLICAS), default 1. */
  replicas?: number;
  /** Processes of one service or of the gateway by name, apart from `replicas` (run.ts's <NAME>_REPLICAS). */
  replicasOf?: Readonly<Record<string, number>>;
  /** The run's database is named <prefix>_<random>. */
  databasePrefix: string;
}

export interface System {
  baseUrl: string;
  /** Every gateway's base URL (one per replica), the first being baseUrl. */
  gatewayUrls: string[];
  /** The metrics endpoint of each service's and the gateway's first process. */
  metricsUrls: string[];
  database: string;
  /** With `cpuProfWindow`: the first call starts every process's profiler, the next stops them and writes the profiles. */
  toggleProfiles(): void;
  stop(): Promise<void>;
}

export function reachable(hostPort: string): Promise<boolean> {
  const [host, port] = [hostPort.slice(0, hostPort.lastIndexOf(":")), Number(hostPort.slice(hostPort.lastIndexOf(":") + 1))];
  return new Promise((r) => {
    const s = connect(port, host);
    const done = (ok: boolean) => {
      s.destroy();
      r(ok);
    };
    s.setTimeout(2_000, () => done(false));
    s.once("connect", () => done(true));
    s.once("error", () => done(false));
  });
}

/**
 * Starts deploy/local/src/run.ts (which provisions a fresh database and starts every service and the gateway)
 * as a process group of its own, so the stop can make sure none of its processes outlives the run.
 */
async function startSystemOnce(settings: SystemSettings, logDir: string, databases: string[]): Promise<System> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const database = `${settings.databasePrefix}_${randomBytes(4).toString("hex")}`;
  databases.push(database);
  const out = openSync(join(logDir, "run.log"), "a");
  const child: ChildProcess = spawn(join(root, "node_modules/.bin/tsx"), [join(root, "deploy/local/src/run.ts")], {
    cwd: root,
    detached: true,
    env: {
      ...process.env,
      PORT: String(port),
      POSTGRES_ADMIN_URL: settings.postgres,
      C402_DATABASE: database,
      KAFKA_BROKERS: settings.kafka,
      REDIS_URL: settings.redis,
      LOG_LEVEL: settings.logLevel,
      REPLICAS: String(settings.replicas ?? 1),
      ...Object.fromEntries(Object.entries(settings.replicasOf ?? {}).map(([name, count]) => [`${name.toUpperCase()}_REPLICAS`, String(count)])),
      LOG_DIR: logDir,
      DATA_DIR: join(logDir, "data"),
      AUTH_RATE_LIMIT_PER_MINUTE: "100000",
      OUTBOUND_ALLOW_LOOPBACK: "true",
      OUTBOUND_RESOLVE_NAMES: "false",
      ...(settings.cpuProfDir
        ? {
            BENCH_CPU_PROF_DIR: resolve(settings.cpuProfDir),
            BENCH_CPU_PROF_WINDOW: settings.cpuProfWindow ? "1" : "0",
            NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${join(__dirname, "cpu-profile.cjs")}`.trim(),
          }
        : {}),
    },
    stdio: ["ignore", out, out],
  });
  closeSync(out);
  const group = child.pid!;
  const alive = () => {
    try {
      process.kill(-group, 0);
      return true;
    } catch {
      return false;
    }
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const deadline = Date.now() + 20_000;
    while (alive() && Date.now() < deadline) await sleep(200);
    if (alive()) {
      log("some processes of the system outlived its stop: killing its process group");
      try {
        process.kill(-group, "SIGKILL");
      } catch {
        // gone meanwhile
      }
      await sleep(500);
    }
  };
  try {
    await waitUntilHealthy(baseUrl, child, 240_000, { deep: true });
  } catch (err) {
    await stop();
    throw err;
  }
  // run.ts names every gateway once it is up: "distributed: gateway on <url>, <url>, services {…}, metrics {…}". The first
  // gateway may answer healthy before run.ts has written that line (read too early, a second gateway went unused).
  const announcement = /distributed: gateway on .*\n/;
  let announced = readFileSync(join(logDir, "run.log"), "utf8");
  for (const deadline = Date.now() + 30_000; !announcement.test(announced); announced = readFileSync(join(logDir, "run.log"), "utf8")) {
    if (Date.now() > deadline) {
      await stop();
      throw new Error("run.ts did not name its gateways and services within 30 s of being healthy");
    }
    await sleep(100);
  }
  const named = /distributed: gateway on (.*?), services /.exec(announced)?.[1];
  const gatewayUrls = named ? named.split(", ") : [baseUrl];
  const metricsPorts = /, metrics (\{[^}]*\})/.exec(announced)?.[1];
  const metricsUrls = Object.values(metricsPorts ? (JSON.parse(metricsPorts) as Record<string, number>) : {}).map((port) => `http://127.0.0.1:${port}/metrics`);
  const toggleProfiles = () => {
    if (settings.cpuProfDir && settings.cpuProfWindow) process.kill(-group, "SIGUSR2");
  };
  return { baseUrl, gatewayUrls, metricsUrls, database, toggleProfiles, stop };
}

/** The gateway's port is picked free and bound seconds later: a system that exits before it is healthy is started again (up to three times). */
export async function startSystem(settings: SystemSettings, logDir: string, databases: string[]): Promise<System> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startSystemOnce(settings, logDir, databases);
    } catch (err) {
      if (attempt === 3 || !(err instanceof ExitedBeforeHealthy)) throw err;
      log(`the system exited before it was healthy (attempt ${attempt}); starting it again on another port`);
    }
  }
}
