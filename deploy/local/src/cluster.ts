/**
 * Distributed mode on one machine, as a library: provisions PostgreSQL (one
 * schema and role per service), then starts every service as its own process
 * (`replicas` of each, as a Deployment would) with real gRPC between them,
 * Kafka as the bus and Redis for the gateway. `run.ts` is its command line;
 * the rolling-restart test (G36) and the failure drills drive it directly.
 *
 * Which services run, with which schema, role, addresses and secrets, comes
 * from the service list (packages/topology). A caller reaches a service's
 * replicas at one address, `ipv4:127.0.0.1:a,127.0.0.1:b`, as a headless
 * Service's DNS name resolves to its pods; the gRPC client spreads calls over
 * them and leaves out one that is stopping.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { devchainSettlement, devchainSettlementAt, startDevchain, type RunningDevchain } from "@c402/devchain";
import { startSolanaDevnet, type SolanaDevnet } from "@c402/solana-devnet";
import { startStellarStandin, type StellarStandin } from "@c402/stellar-standin";
import { formatCallers, waitUntilServing } from "@c402/rpc";
import {
  addressVariables,
  callersOf,
  CHAIN_READ_SETTINGS,
  devchainEscrowSettings,
  developmentSecrets,
  entryFile,
  GATEWAY,
  rpcTokenKey,
  SERVICES,
} from "@c402/topology";
import { freePort } from "./ports";
import { provision, serviceDatabaseUrl } from "./provision";
import { waitUntilHealthy } from "./health-wait";

const root = resolve(__dirname, "../../..");
/** How long a service may take to migrate and start (compose allows 90 s before its health checks count). */
const SERVICE_START_TIMEOUT_MS = 120_000;

export interface LocalClusterOptions {
  adminUrl: string;
  database: string;
  kafkaBrokers: string;
  redisUrl: string;
  /** The first gateway's port; further gateways take free ports. */
  gatewayPort: number;
  /** Processes of each service and of the gateway (default 1). */
  replicas?: number;
  /** Processes of a service or of the gateway by its name, where it differs from `replicas`. */
  replicasOf?: Readonly<Record<string, number>>;
  /** Where each process writes its output (`<name>.log`, `<name>.<replica>.log`); unset: this process's terminal. */
  logDir?: string;
  /** The environment every process starts from (default this process's). */
  env?: NodeJS.ProcessEnv;
  /** A process stopped that nobody stopped (not `restart`, not `stop`). */
  onUnexpectedExit?: (process: ClusterProcess, code: number | null, signal: NodeJS.Signals | null) => void;
  /** How a program (a service's or the gateway's name) is started; default: its TypeScript entry with tsx, in this workspace. */
  command?: (program: string) => ProgramCommand;
  /** A devchain already running elsewhere (e.g. from the devchain image), at compose's fixed layout; default: one is started here unless EVM_RPC_URL is set. */
  devchainUrl?: string;
  /**
   * Where the Stellar stand-in's CA certificate is written for the programs: a directory of this machine and the
   * path the programs see it at (they differ when they run chrooted in an image's root filesystem); default a new
   * temporary directory, seen at the same path.
   */
  stellarCaDirectory?: { here: string; inPrograms: string };
}

export interface ProgramCommand {
  file: string;
  args: readonly string[];
  cwd: string;
}

export interface ClusterProcess {
  /** A service's name, or the gateway's. */
  name: string;
  replica: number;
  /** A service's gRPC port, or the gateway's HTTP port. */
  port: number;
  metricsPort: number;
  child: ChildProcess;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** SIGTERM to exit. */
  stopMs: number;
}

export interface LocalCluster {
  /** Every process, as running now (a restart replaces its entry's child). */
  readonly processes: readonly ClusterProcess[];
  gatewayUrls: string[];
  /** Each service's address as its callers get it (all its replicas). */
  addresses: Record<string, string>;
  /** Each process's RPC token (from the environment as <NAME>_RPC_TOKEN, else random). */
  rpcTokens: Record<string, string>;
  devchain?: RunningDevchain;
  /** The local Solana devnet payments settles Solana on (in this process), unless SOLANA_RPC_URL points elsewhere. */
  solanaDevnet?: SolanaDevnet;
  /** The local Stellar stand-in payments settles Stellar on (in this process), unless STELLAR_RPC_URL points elsewhere, and its CA's file. */
  stellar?: { standin: StellarStandin; caFile: string };
  /**
   * What a Kubernetes rollout does to one pod: SIGTERM, wait for the exit (a
   * process that outlives `graceMs` is killed, as the kubelet would), start it
   * again on the same port and wait until it serves.
   */
  restart(process: ClusterProcess, graceMs?: number): Promise<ProcessExit>;
  /**
   * What a crash or an OOM kill does: SIGKILL (nothing is finished, nothing
   * closed), `downMs` with the process gone, then it starts again on the same
   * port; resolves once it serves again.
   */
  kill(process: ClusterProcess, downMs?: number): Promise<ProcessExit>;
  /** SIGTERM to every process (and the devchain), and wait. */
  stop(): Promise<void>;
}

/** Spending wallets live on the chains payments settles on: the devchain's USDC and the Solana devnet (never its fee payer's key). */
const SPENDING_WALLET_CHAIN_SETTINGS: readonly string[] = ["EVM_USDC_ADDRESS", "SOLANA_ENABLED", "SOLANA_NETWORK", "SOLANA_RPC_URL", "SOLANA_USDC_MINT"];

export async function startLocalCluster(opts: LocalClusterOptions): Promise<LocalCluster> {
  const env = opts.env ?? process.env;
  const processCount = (name: string) => opts.replicasOf?.[name] ?? opts.replicas ?? 1;
  // Live settlement needs a chain: the local devchain unless EVM_RPC_URL points elsewhere or one runs already.
  const devchain = env.EVM_RPC_URL || opts.devchainUrl ? undefined : await startDevchain({ port: Number(env.DEVCHAIN_PORT ?? 0) });
  const devchainUrl = devchain?.url ?? opts.devchainUrl;
  const settlement = devchain ? devchainSettlement(devchain) : opts.devchainUrl ? devchainSettlementAt(opts.devchainUrl) : undefined;
  const chainEnv: Record<string, string> = settlement
    ? {
        EVM_NETWORK: settlement.network,
        EVM_RPC_URL: settlement.rpcUrl,
        EVM_USDC_ADDRESS: settlement.usdc,
        SPLIT_FACTORY_ADDRESS: settlement.splitFactory,
        FACILITATOR_PRIVATE_KEY: settlement.facilitatorKey,
        FEE_WALLET_ADDRESS: settlement.feeWallet,
        // Escrow sales' payTo and their terms' verifying contract (the escrow service holds them there).
        ESCROW_CONTRACT: settlement.escrow,
      }
    : {};
  // Solana too: a local devnet in this process, with a fee payer funded there, unless SOLANA_RPC_URL points elsewhere.
  const solanaDevnet = env.SOLANA_RPC_URL ? undefined : await startSolanaDevnet({ port: Number(env.SOLANA_DEVNET_PORT ?? 0) });
  if (solanaDevnet) {
    const feePayer = await solanaDevnet.fundedKeyPair(1_000_000_000_000n);
    Object.assign(chainEnv, {
      SOLANA_ENABLED: "true",
      SOLANA_NETWORK: solanaDevnet.network,
      SOLANA_RPC_URL: solanaDevnet.url,
      SOLANA_USDC_MINT: solanaDevnet.usdcMint,
      SOLANA_FEE_PAYER_KEY: feePayer.secretKey,
    });
  }
  // Stellar: a Soroban RPC stand-in in this process unless STELLAR_RPC_URL points elsewhere. Each payments replica
  // submits from an account of its own (ADR 17: sequence numbers are taken per process).
  const stellarStandin = env.STELLAR_RPC_URL ? undefined : await startStellarStandin({ port: Number(env.STELLAR_STANDIN_PORT ?? 0) });
  let stellarCa: { here: string; inPrograms: string } | undefined;
  if (stellarStandin) {
    const directory = opts.stellarCaDirectory ?? ((here) => ({ here, inPrograms: here }))(mkdtempSync(join(tmpdir(), "c402-stellar-")));
    stellarCa = { here: join(directory.here, "ca.pem"), inPrograms: join(directory.inPrograms, "ca.pem") };
    writeFileSync(stellarCa.here, stellarStandin.caCertificatePem, { mode: 0o644 });
  }
  const stellarCaFile = stellarCa?.inPrograms;
  const stellarEnv = (): Record<string, string> =>
    stellarStandin && stellarCaFile
      ? {
          STELLAR_NETWORK: stellarStandin.network,
          STELLAR_RPC_URL: stellarStandin.url,
          STELLAR_USDC_CONTRACT: stellarStandin.usdc,
          STELLAR_FACILITATOR_SECRET: stellarStandin.fundedAccount().secret,
          STELLAR_RPC_CA_FILE: stellarCaFile,
          STELLAR_LEDGER_SECONDS: String(stellarStandin.ledgerSeconds),
        }
      : {};
  const passwords = Object.fromEntries(SERVICES.map((s) => [s.name, randomBytes(12).toString("hex")]));
  await provision(opts.adminUrl, opts.database, passwords);

  const ports = async (name: string) => Promise.all(Array.from({ length: processCount(name) }, () => freePort())).then((p) => [name, p] as const);
  const grpcPorts = Object.fromEntries(await Promise.all(SERVICES.map((s) => ports(s.name))));
  const gatewayPorts = [opts.gatewayPort, ...(await Promise.all(Array.from({ length: processCount(GATEWAY.name) - 1 }, () => freePort())))];
  const addresses = Object.fromEntries(
    SERVICES.map((s) => {
      const list = (grpcPorts[s.name] as number[]).map((p) => `127.0.0.1:${p}`);
      return [s.name, list.length === 1 ? (list[0] as string) : `ipv4:${list.join(",")}`];
    }),
  );
  const address = (s: { name: string }) => addresses[s.name] as string;
  // LOG_LEVEL and the rest of this environment reach every child as they are (unset: each process's own default).
  const common = { KAFKA_BROKERS: opts.kafkaBrokers, KAFKAJS_NO_PARTITIONER_WARNING: "1" };
  // A secret with a format of its own has a fixed development value; the rest are random per run.
  const secret = (name: string, development?: string) => env[name] ?? development ?? randomBytes(32).toString("hex");
  const baseUrl = env.BASE_URL ?? `http://127.0.0.1:${opts.gatewayPort}`;
  // Each process its own RPC token (from this environment as <NAME>_RPC_TOKEN, else random); each service lists its callers' digests.
  const rpcTokens = Object.fromEntries([...SERVICES.map((s) => s.name), GATEWAY.name].map((name) => [name, secret(rpcTokenKey(name))]));
  const rpcIdentity = (name: string): Record<string, string> => {
    const callers = callersOf(name);
    return {
      ...(name === GATEWAY.name || (SERVICES.find((s) => s.name === name)?.calls.length ?? 0) > 0 ? { RPC_TOKEN: rpcTokens[name] as string } : {}),
      ...(callers.length > 0 ? { RPC_CALLERS: formatCallers(Object.fromEntries(callers.map((c) => [c, rpcTokens[c] as string]))) } : {}),
    };
  };

  const processes: ClusterProcess[] = [];
  const expectedExits = new Set<ChildProcess>();
  let stopping = false;
  const logFile = (p: Pick<ClusterProcess, "name" | "replica">) =>
    join(opts.logDir as string, p.replica === 0 ? `${p.name}.log` : `${p.name}.${p.replica}.log`);
  const spawnChild = (p: Omit<ClusterProcess, "child">, vars: Record<string, string>): ChildProcess => {
    // `node --import tsx` rather than the tsx CLI, so a signal reaches the service itself (as the kubelet's does).
    const command = opts.command?.(p.name) ?? { file: process.execPath, args: ["--import", "tsx", join(root, entryFile(p.name))], cwd: root };
    const child = spawn(command.file, command.args, {
      cwd: command.cwd,
      env: { ...env, ...common, ...vars, METRICS_PORT: String(p.metricsPort) },
      stdio: opts.logDir ? ["ignore", "pipe", "pipe"] : "inherit",
    });
    if (opts.logDir) {
      mkdirSync(opts.logDir, { recursive: true });
      const out = createWriteStream(logFile(p), { flags: "a" });
      child.stdout?.pipe(out);
      child.stderr?.pipe(out);
    }
    child.once("exit", (code, signal) => {
      if (stopping || expectedExits.delete(child)) return;
      const entry = processes.find((e) => e.child === child);
      if (entry) opts.onUnexpectedExit?.(entry, code, signal);
    });
    return child;
  };
  const launchers = new Map<ClusterProcess, () => ChildProcess>();
  const launch = (name: string, replica: number, port: number, vars: Record<string, string>, metricsPort: number) => {
    const entry = { name, replica, port, metricsPort } as ClusterProcess;
    const start = () => spawnChild(entry, vars);
    entry.child = start();
    launchers.set(entry, start);
    processes.push(entry);
    return entry;
  };
  /** Resolves once the process serves; a process that exits first fails at once, with the end of its log (the reason it stopped). */
  const ready = async (entry: ClusterProcess) => {
    if (entry.name === GATEWAY.name) return waitUntilHealthy(`http://127.0.0.1:${entry.port}`, entry.child, SERVICE_START_TIMEOUT_MS);
    let onExit: ((code: number | null, signal: NodeJS.Signals | null) => void) | undefined;
    const exited = new Promise<never>((_, reject) => {
      onExit = (code, signal) => {
        const tail = opts.logDir && existsSync(logFile(entry)) ? readFileSync(logFile(entry), "utf8").split("\n").slice(-15).join("\n") : "";
        reject(new Error(`${entry.name}.${entry.replica} exited (${code ?? signal}) before it served${tail ? `; the end of its log:\n${tail}` : ""}`));
      };
      entry.child.once("exit", onExit);
    });
    try {
      await Promise.race([waitUntilServing(`127.0.0.1:${entry.port}`, SERVICE_START_TIMEOUT_MS), exited]);
    } finally {
      if (onExit) entry.child.off("exit", onExit);
    }
  };

  try {
    await startAll();
  } catch (err) {
    // Nothing half-started is left behind.
    stopping = true;
    for (const p of processes) p.child.kill("SIGKILL");
    await devchain?.stop();
    await solanaDevnet?.close();
    await stellarStandin?.close();
    throw err;
  }
  async function startAll() {
    for (const s of SERVICES) {
      const vars = {
        ...rpcIdentity(s.name),
        ...(s.readsBaseUrl ? { BASE_URL: baseUrl } : {}),
        ...addressVariables(s.calls, address),
        ...Object.fromEntries(developmentSecrets(s).map((x) => [x.env, secret(x.env, x.developmentValue)])),
        ...(s.settlesOnChain ? chainEnv : {}),
        ...(s.readsChain ? Object.fromEntries(Object.entries(chainEnv).filter(([env]) => (CHAIN_READ_SETTINGS as readonly string[]).includes(env))) : {}),
        ...(s.relaysEscrow && settlement ? Object.fromEntries(devchainEscrowSettings(settlement)) : {}),
        ...(s.name === "spending-wallets" ? Object.fromEntries(Object.entries(chainEnv).filter(([env]) => SPENDING_WALLET_CHAIN_SETTINGS.includes(env))) : {}),
        DATABASE_URL: serviceDatabaseUrl(opts.adminUrl, opts.database, s.name, passwords[s.name] as string),
      };
      for (const [replica, port] of (grpcPorts[s.name] as number[]).entries())
        launch(s.name, replica, port, { ...vars, ...(s.settlesOnChain ? stellarEnv() : {}), GRPC_PORT: String(port) }, await freePort());
    }
    // As compose's depends_on (service_healthy) and Kubernetes' readiness: the gateway starts once every
    // service reports SERVING on grpc.health.v1 (migrated, started).
    await Promise.all(processes.map(ready));
    for (const [replica, port] of gatewayPorts.entries()) {
      launch(
        GATEWAY.name,
        replica,
        port,
        {
          PORT: String(port),
          ...rpcIdentity(GATEWAY.name),
          REDIS_URL: opts.redisUrl,
          ...addressVariables(GATEWAY.calls, address),
          ...(devchainUrl ? { DEVCHAIN_URL: devchainUrl } : {}),
          ...(solanaDevnet ? { SOLANA_DEVNET_URL: solanaDevnet.url } : {}),
          ...(stellarStandin && stellarCaFile ? { STELLAR_STANDIN_URL: stellarStandin.url, STELLAR_STANDIN_CA_FILE: stellarCaFile } : {}),
          ...(env.BASE_URL ? { BASE_URL: env.BASE_URL } : {}),
        },
        await freePort(),
      );
    }
    await Promise.all(processes.filter((p) => p.name === GATEWAY.name).map(ready));
  }

  const exitOf = (child: ChildProcess) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      child.exitCode !== null || child.signalCode !== null
        ? r({ code: child.exitCode, signal: child.signalCode })
        : child.once("exit", (code, signal) => r({ code, signal })),
    );
  const startAgain = async (entry: ClusterProcess) => {
    entry.child = (launchers.get(entry) as () => ChildProcess)();
    await ready(entry);
  };
  return {
    processes,
    gatewayUrls: gatewayPorts.map((p) => `http://127.0.0.1:${p}`),
    addresses,
    rpcTokens,
    devchain,
    ...(solanaDevnet ? { solanaDevnet } : {}),
    ...(stellarStandin && stellarCa ? { stellar: { standin: stellarStandin, caFile: stellarCa.here } } : {}),
    async restart(entry, graceMs = 30_000) {
      const started = Date.now();
      expectedExits.add(entry.child);
      entry.child.kill("SIGTERM");
      const killer = setTimeout(() => entry.child.kill("SIGKILL"), graceMs);
      const exit = await exitOf(entry.child);
      clearTimeout(killer);
      const stopMs = Date.now() - started;
      await startAgain(entry);
      return { ...exit, stopMs };
    },
    async kill(entry, downMs = 0) {
      const started = Date.now();
      expectedExits.add(entry.child);
      entry.child.kill("SIGKILL");
      const exit = await exitOf(entry.child);
      const stopMs = Date.now() - started;
      await new Promise((r) => setTimeout(r, downMs));
      await startAgain(entry);
      return { ...exit, stopMs };
    },
    async stop() {
      stopping = true;
      for (const p of processes) p.child.kill("SIGTERM");
      const killer = setTimeout(() => processes.forEach((p) => p.child.kill("SIGKILL")), 10_000);
      await Promise.all(processes.map((p) => exitOf(p.child)));
      clearTimeout(killer);
      await devchain?.stop();
      await solanaDevnet?.close();
      await stellarStandin?.close();
    },
  };
}
