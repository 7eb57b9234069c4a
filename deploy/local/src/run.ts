/**
 * Distributed mode on one machine, from the command line (the cluster itself is
 * cluster.ts): every service as its own process with real gRPC between them,
 * Kafka as the bus and Redis for the gateway. Stops them all on SIGTERM/SIGINT,
 * or when any of them dies.
 *
 * Environment: POSTGRES_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
 * C402_DATABASE (default c402), KAFKA_BROKERS (default 127.0.0.1:19092),
 * REDIS_URL (default redis://127.0.0.1:6379), PORT (the first gateway, default its PORT default, 4020),
 * REPLICAS (processes of each service and of the gateway, default 1; further gateways take free ports),
 * <NAME>_REPLICAS (one service's or the gateway's own count instead: PAYMENTS_REPLICAS=2),
 * LOG_DIR (child logs; default: inherit the terminal). Each process gets a free METRICS_PORT (printed at start). A service secret (SUBJECT_SECRET) not set
 * here is generated for the run. Every child inherits this environment, so
 * the gateway's own settings (TRUST_PROXY, AUTH_RATE_LIMIT_PER_MINUTE, AUTH_FAILURE_LIMIT_PER_MINUTE,
 * SERVICE_NAME, ...) reach it unchanged.
 */
import { loadConfig } from "@c402/config";
import { gatewayConfigSpec } from "@c402/gateway";
import { DATABASE, envPrefix, GATEWAY, SERVICES } from "@c402/topology";
import { startLocalCluster, type LocalCluster } from "./cluster";

async function main() {
  const replicas = replicaCount("REPLICAS") ?? 1;
  // PAYMENTS_REPLICAS=2, GATEWAY_REPLICAS=3, …: one process's count apart from the rest.
  const replicasOf = Object.fromEntries(
    [...SERVICES.map((s) => s.name), GATEWAY.name].flatMap((name) => {
      const count = replicaCount(`${envPrefix(name)}_REPLICAS`);
      return count === undefined ? [] : [[name, count] as const];
    }),
  );
  let stopping = false;
  // Set once started; a process that dies meanwhile fails the start instead.
  const started: { cluster?: LocalCluster } = {};
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(code), 15_000).unref();
    await started.cluster?.stop();
    process.exit(code);
  };
  const cluster = await startLocalCluster({
    adminUrl: process.env.POSTGRES_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    database: process.env.C402_DATABASE ?? DATABASE,
    kafkaBrokers: process.env.KAFKA_BROKERS ?? "127.0.0.1:19092",
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    gatewayPort: Number(process.env.PORT ?? loadConfig(gatewayConfigSpec, {}).port),
    replicas,
    replicasOf,
    logDir: process.env.LOG_DIR,
    onUnexpectedExit: (p, code) => {
      process.stderr.write(`${p.name}${p.replica > 0 ? ` (replica ${p.replica})` : ""} exited (${code}); stopping everything\n`);
      void stopAll(1);
    },
  });
  started.cluster = cluster;
  const firsts = cluster.processes.filter((p) => p.replica === 0);
  const services = Object.fromEntries(firsts.filter((p) => p.name !== GATEWAY.name).map((p) => [p.name, p.port]));
  const metrics = Object.fromEntries(firsts.map((p) => [p.name, p.metricsPort]));
  process.stdout.write(
    `distributed: gateway on ${cluster.gatewayUrls.join(", ")}, services ${JSON.stringify(services)}, metrics ${JSON.stringify(metrics)}` +
      (cluster.processes.some((p) => p.replica > 0) ? `, replicas (services at ${JSON.stringify(cluster.addresses)})` : "") +
      "\n",
  );
  process.once("SIGTERM", () => void stopAll(0));
  process.once("SIGINT", () => void stopAll(0));
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : err}\n`);
  process.exit(1);
});

/** A process count from the environment: a whole number from 1 to 8, or undefined when unset. */
function replicaCount(variable: string): number | undefined {
  const value = process.env[variable];
  if (value === undefined || value === "") return undefined;
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > 8) throw new Error(`${variable} must be a whole number from 1 to 8, not ${value}`);
  return count;
}
