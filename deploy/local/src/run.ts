/**
 * Distributed mode on one machine: provisions PostgreSQL (one schema and role
 * per service), then starts every service as its own process with real gRPC
 * between them, Kafka as the bus and Redis for the gateway. Stops them all on
 * SIGTERM/SIGINT, or when any of them dies.
 *
 * Which services run, with which schema, role, addresses and secrets, comes from the service
 * list (packages/topology).
 *
 * Environment: POSTGRES_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
 * C402_DATABASE (default c402), KAFKA_BROKERS (default 127.0.0.1:19092),
 * REDIS_URL (default redis://127.0.0.1:6379), PORT (gateway, default its PORT default, 4020),
 * LOG_DIR (child logs; default: inherit the terminal). Each process gets a free METRICS_PORT (printed at start). A service secret (SUBJECT_SECRET) not set
 * here is generated for the run. Every child inherits this environment, so
 * the gateway's own settings (TRUST_PROXY, AUTH_RATE_LIMIT_PER_MINUTE, AUTH_FAILURE_LIMIT_PER_MINUTE,
 * SERVICE_NAME, ...) reach it unchanged.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadConfig } from "@c402/config";
import { devchainSettlement, startDevchain } from "@c402/devchain";
import { gatewayConfigSpec } from "@c402/gateway";
import { formatCallers, waitUntilServing } from "@c402/rpc";
import { addressVariables, callersOf, DATABASE, developmentSecrets, entryFile, GATEWAY, rpcTokenKey, SERVICES } from "@c402/topology";
import { freePort } from "./ports";
import { provision, serviceDatabaseUrl } from "./provision";

const root = resolve(__dirname, "../../..");
const tsx = join(root, "node_modules/.bin/tsx");
/** How long a service may take to migrate and start (compose allows 90 s before its health checks count). */
const SERVICE_START_TIMEOUT_MS = 120_000;

async function main() {
  const adminUrl = process.env.POSTGRES_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const database = process.env.C402_DATABASE ?? DATABASE;
  const kafka = process.env.KAFKA_BROKERS ?? "127.0.0.1:19092";
  const redis = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const port = process.env.PORT ?? String(loadConfig(gatewayConfigSpec, {}).port);
  const logDir = process.env.LOG_DIR;
  // Live settlement needs a chain: the local devchain unless EVM_RPC_URL points elsewhere.
  const devchain = process.env.EVM_RPC_URL ? undefined : await startDevchain({ port: Number(process.env.DEVCHAIN_PORT ?? 0) });
  const settlement = devchain && devchainSettlement(devchain);
  const chainEnv: Record<string, string> = settlement
    ? {
        EVM_NETWORK: settlement.network,
        EVM_RPC_URL: settlement.rpcUrl,
        EVM_USDC_ADDRESS: settlement.usdc,
        SPLIT_FACTORY_ADDRESS: settlement.splitFactory,
        FACILITATOR_PRIVATE_KEY: settlement.facilitatorKey,
        FEE_WALLET_ADDRESS: settlement.feeWallet,
      }
    : {};
  const passwords = Object.fromEntries(SERVICES.map((s) => [s.name, randomBytes(12).toString("hex")]));
  await provision(adminUrl, database, passwords);

  const ports = Object.fromEntries(await Promise.all(SERVICES.map(async (s) => [s.name, await freePort()] as const)));
  // Each process serves its Prometheus metrics on a port of its own (one machine here; each pod its own 9464 in Kubernetes).
  const metricsPorts = Object.fromEntries(
    await Promise.all([...SERVICES.map((s) => s.name), GATEWAY.name].map(async (name) => [name, await freePort()] as const)),
  );
  const address = (s: { name: string }) => `127.0.0.1:${ports[s.name]}`;
  // LOG_LEVEL and the rest of this environment reach every child as they are (unset: each process's own default).
  const common = { KAFKA_BROKERS: kafka, KAFKAJS_NO_PARTITIONER_WARNING: "1" };
  // A secret with a format of its own has a fixed development value; the rest are random per run.
  const secret = (name: string, development?: string) => process.env[name] ?? development ?? randomBytes(32).toString("hex");
  const baseUrl = process.env.BASE_URL ?? `http://127.0.0.1:${port}`;
  const children: ChildProcess[] = [];
  let stopping = false;
  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const c of children) c.kill("SIGTERM");
    void devchain?.stop();
    setTimeout(() => process.exit(code), 3_000).unref();
    Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once("exit", r))))).then(() => process.exit(code));
  };
  const start = (name: string, entry: string, vars: Record<string, string>) => {
    const child = spawn(tsx, [join(root, entry)], { env: { ...process.env, ...common, ...vars }, stdio: logDir ? ["ignore", "pipe", "pipe"] : "inherit" });
    if (logDir) {
      mkdirSync(logDir, { recursive: true });
      const out = createWriteStream(join(logDir, `${name}.log`));
      child.stdout?.pipe(out);
      child.stderr?.pipe(out);
    }
    child.once("exit", (code) => {
      if (!stopping) {
        process.stderr.write(`${name} exited (${code}); stopping everything\n`);
        stopAll(1);
      }
    });
    children.push(child);
  };
  // Each process its own RPC token (from this environment as <NAME>_RPC_TOKEN, else random); each service lists its callers' digests.
  const rpcTokens = Object.fromEntries([...SERVICES.map((s) => s.name), GATEWAY.name].map((name) => [name, secret(rpcTokenKey(name))]));
  const rpcIdentity = (name: string): Record<string, string> => {
    const callers = callersOf(name);
    return {
      ...(name === GATEWAY.name || (SERVICES.find((s) => s.name === name)?.calls.length ?? 0) > 0 ? { RPC_TOKEN: rpcTokens[name] as string } : {}),
      ...(callers.length > 0 ? { RPC_CALLERS: formatCallers(Object.fromEntries(callers.map((c) => [c, rpcTokens[c] as string]))) } : {}),
    };
  };
  for (const s of SERVICES) {
    start(s.name, entryFile(s.name), {
      ...rpcIdentity(s.name),
      ...(s.readsBaseUrl ? { BASE_URL: baseUrl } : {}),
      ...addressVariables(s.calls, address),
      ...Object.fromEntries(developmentSecrets(s).map((x) => [x.env, secret(x.env, x.developmentValue)])),
      ...(s.settlesOnChain ? chainEnv : {}),
      GRPC_PORT: String(ports[s.name]),
      METRICS_PORT: String(metricsPorts[s.name]),
      DATABASE_URL: serviceDatabaseUrl(adminUrl, database, s.name, passwords[s.name] as string),
    });
  }
  // As compose's depends_on (service_healthy) and Kubernetes' readiness: the gateway starts once every
  // service reports SERVING on grpc.health.v1 (migrated, started).
  await Promise.all(SERVICES.map((s) => waitUntilServing(address(s), SERVICE_START_TIMEOUT_MS)));
  start(GATEWAY.name, entryFile(GATEWAY.name), {
    PORT: port,
    ...rpcIdentity(GATEWAY.name),
    METRICS_PORT: String(metricsPorts[GATEWAY.name]),
    REDIS_URL: redis,
    ...addressVariables(GATEWAY.calls, address),
    ...(devchain ? { DEVCHAIN_URL: devchain.url } : {}),
    ...(process.env.BASE_URL ? { BASE_URL: process.env.BASE_URL } : {}),
  });
  process.stdout.write(`distributed: gateway on http://127.0.0.1:${port}, services ${JSON.stringify(ports)}, metrics ${JSON.stringify(metricsPorts)}\n`);
  process.once("SIGTERM", () => stopAll(0));
  process.once("SIGINT", () => stopAll(0));
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : err}\n`);
  process.exit(1);
});
