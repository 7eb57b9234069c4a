import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseBus } from "@c402/bus";
import { MemoryCache } from "@c402/cache";
import { defaultOf, loadConfig } from "@c402/config";
import {
  catalogV1,
  contentGrantsV1,
  escrowV1,
  fulfillmentV1,
  healthV1,
  identityV1,
  paymentsV1,
  schedulesV1,
  spendingWalletsV1,
  webhooksV1,
} from "@c402/contracts";
import { EmbeddedPostgres } from "@c402/db";
import { devchainSettlement, startDevchain, type RunningDevchain } from "@c402/devchain";
import { startSolanaDevnet, type SolanaDevnet } from "@c402/solana-devnet";
import { startStellarStandin, type StellarStandin } from "@c402/stellar-standin";
import { createLogger, type Logger } from "@c402/logging";
import { createClient, formatCallers, parseCallers, RpcServer, type InProcessChannel, type ServiceClient } from "@c402/rpc";
import { busSpec, deadLetterPolicy, rpcFailureLog, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { createCatalogService } from "@c402/catalog";
import { createFulfillmentService } from "@c402/fulfillment";
import { gatewayConfigSpec, SERVICE_VERSION, startGateway, type StartedGateway, type TrustProxy } from "@c402/gateway";
import { createIdentityService, identityConfigSpec, identityMailer } from "@c402/identity";
import { createContentGrantsService } from "@c402/content-grants";
import { createEscrowService, escrowSettingsOf } from "@c402/escrow";
import { createPaymentsService } from "@c402/payments";
import { createSchedulesService, schedulesSettingsOf, schedulesSettingsSpec } from "@c402/schedules";
import { createSpendingWalletsService, spendingWalletsSettingsOf, spendingWalletsSettingsSpec } from "@c402/spending-wallets";
import { generateKeyringText, parseKeyring } from "@c402/sealed-secrets";
import { SERVICES, type ServiceName } from "@c402/topology";
import { createWebhooksService } from "@c402/webhooks";

export interface EmbeddedOptions {
  host?: string;
  port?: number;
  /** Where PGlite keeps its data; ":memory:" for a throwaway database. */
  dataDir: string;
  baseUrl?: string;
  siteUrl?: string;
  serviceName?: string;
  logger?: Logger;
  authRateLimitPerMinute?: number;
  /** Failed authentications per minute per client address and per key prefix (gateway default 20). */
  authFailureLimitPerMinute?: number;
  packageCallsPerMinute?: number;
  /** Proxies trusted to name the client in X-Forwarded-For (default: none). */
  trustProxy?: TrustProxy;
  /** Port of the local EVM chain the live face settles on (default 8545, or a free one when it is taken; 0 picks a free one). */
  devchainPort?: number;
  /** Whether Solana is exposed (the spec's switch; default on in embedded mode): a local Solana devnet is started and settled on. */
  solanaEnabled?: boolean;
  /** Port of the local Solana devnet (unset or 0: one the OS picks). */
  solanaDevnetPort?: number;
  /** Whether a local Stellar stand-in (Soroban RPC, as stellar:testnet) is started and settled on (default true). */
  stellarEnabled?: boolean;
  /** Port of the local Stellar stand-in (unset or 0: one the OS picks). */
  stellarStandinPort?: number;
  /** Relay for sign-in mails; unset: each mail is written as an .eml file under <dataDir>/mail/. */
  smtpUrl?: string;
  /** Sender of sign-in mails (identity's MAIL_FROM default). */
  mailFrom?: string;
  /** Whether sellers' origins and MCP servers may be on loopback (default true: embedded mode runs on a developer's machine). */
  outboundAllowLoopback?: boolean;
  /** Whether names in sellers' URLs are looked up in DNS (default true; the e2e suite turns it off so nothing leaves the machine). */
  outboundResolveNames?: boolean;
  /** The service's default escrow arbiters (ESCROW_DEFAULT_ARBITER_EVM, ESCROW_DEFAULT_ARBITER_SVM; unset: none). */
  escrowDefaultArbiterEvm?: string;
  escrowDefaultArbiterSvm?: string;
  /** How long a series day lasts on the test face (SCHEDULE_REHEARSAL_DAY_SECONDS; payments' default 60). */
  scheduleRehearsalDaySeconds?: number;
  /** BUS_DEAD_LETTER_AFTER_ATTEMPTS. */
  deadLetterAfterAttempts?: number;
  /**
   * Hears, once, that the database's thread ended while running (logged as fatal first): every
   * statement fails from then on, so the process should stop and be started again.
   */
  onDatabaseLost?: (reason: Error) => void;
}

export interface EmbeddedSystem {
  gateway: StartedGateway;
  devchain: RunningDevchain;
  /** The local Solana devnet, when Solana is exposed. */
  solanaDevnet?: SolanaDevnet;
  /** The local Stellar stand-in and the file of the authority its certificate is issued by, when Stellar is settled on. */
  stellar?: { standin: StellarStandin; caFile: string };
  grpcAddresses: Record<string, string>;
  /** The token its services accept (made at start, never stored): for tools and tests that call them directly. */
  rpcToken: string;
  /** Where sign-in mails go (SMTP, or the directory of .eml files), for the start line. */
  mail: string;
  /** Which origins sellers' checkouts may call, for the start line. */
  origins: string;
  stop(): Promise<void>;
}

interface Secrets {
  subjectSecret: string;
  /** The keyring that seals stored credentials (SECRETS_KEYRING's format). */
  secretsKeyring: string;
  /** The keyring that seals webhook secrets and signing keys (WEBHOOK_SECRETS_KEYRING's format). */
  webhookSecretsKeyring: string;
  /** The keys that sign gated-content passes (GRANT_KEYRING's format). */
  grantKeyring: string;
  spendingWalletsKeyring: string;
}

const newSecrets = (): Secrets => ({
  subjectSecret: randomBytes(32).toString("hex"),
  secretsKeyring: generateKeyringText("k1"),
  webhookSecretsKeyring: generateKeyringText("w1"),
  grantKeyring: generateKeyringText("g1"),
  spendingWalletsKeyring: generateKeyringText("s1"),
});

/** Secrets of an embedded install, generated on first start and kept beside the data (one added later is added to the file). */
function loadSecrets(dataDir: string): Secrets {
  if (dataDir === ":memory:") return newSecrets();
  const file = join(dataDir, "secrets.json");
  const kept = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Partial<Secrets>) : {};
  const secrets: Secrets = { ...newSecrets(), ...kept };
  if (Object.keys(kept).length !== Object.keys(secrets).length) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(secrets), { mode: 0o600 });
  }
  return secrets;
}

/** The gRPC contract of every service of the list (packages/topology): a new service does not compile until it is here and in `build`. */
const CONTRACTS = {
  identity: identityV1.IdentityService,
  "content-grants": contentGrantsV1.ContentGrantsService,
  catalog: catalogV1.CatalogService,
  payments: paymentsV1.PaymentsService,
  fulfillment: fulfillmentV1.FulfillmentService,
  webhooks: webhooksV1.WebhooksService,
  escrow: escrowV1.EscrowService,
  schedules: schedulesV1.SchedulesService,
  "spending-wallets": spendingWalletsV1.SpendingWalletsService,
} satisfies Record<ServiceName, unknown>;

type Clients = { [N in ServiceName]: ServiceClient<(typeof CONTRACTS)[N]> };

/** The gateway's and identity's defaults, from their config modules (what distributed mode reads with nothing set). */
const gatewayDefaults = loadConfig(gatewayConfigSpec, {});
const identityDefaults = loadConfig(identityConfigSpec, {});
const schedulesDefaults = loadConfig(schedulesSettingsSpec, {});
const spendingWalletsDefaults = loadConfig(spendingWalletsSettingsSpec, {});

/**
 * Every service in one process: PGlite (one schema per service), the
 * durable embedded bus, the in-memory cache. Each service's gRPC server listens on a loopback
 * port the OS picks (so two instances can run side by side, and tools can call a service), and
 * the services call each other in process, through the same server pipeline (token, contract
 * rules, problems, deadlines, metrics) with their messages encoded as on the wire.
 */
export async function startEmbeddedSystem(opts: EmbeddedOptions): Promise<EmbeddedSystem> {
  const logger = opts.logger ?? createLogger({ service: "embedded" });
  const host = opts.host ?? "127.0.0.1";
  const secrets = loadSecrets(opts.dataDir);
  // Live settlement runs on a local chain as eip155:84532 (never as Base mainnet: a signature
  // made for chain 8453 could be replayed on the real network).
  const devchain = await startDevchain(opts.devchainPort === undefined ? {} : { port: opts.devchainPort });
  logger.info({ url: devchain.url, network: devchain.network }, "devchain serving");
  let solana: LocalSolana | undefined;
  let stellar: LocalStellar | undefined;
  try {
    solana = opts.solanaEnabled === false ? undefined : await startLocalSolana(opts.solanaDevnetPort);
    if (solana) logger.info({ url: solana.devnet.url, network: solana.devnet.network }, "solana devnet serving");
    stellar = opts.stellarEnabled === false ? undefined : await startLocalStellar(opts.stellarStandinPort);
    if (stellar) logger.info({ url: stellar.standin.url, network: stellar.standin.network }, "stellar stand-in serving");
    return await startOnDevchain(opts, logger, host, secrets, devchain, solana, stellar);
  } catch (err) {
    // The devchain is a child process: a start that failed must not leave it running.
    await devchain.stop().catch(() => undefined);
    await solana?.devnet.close().catch(() => undefined);
    await stellar?.standin.close().catch(() => undefined);
    throw err;
  }
}

/** The local Stellar stand-in, the account the Stellar rail submits from (fresh, funded there, for this run) and its CA's file. */
interface LocalStellar {
  standin: StellarStandin;
  facilitatorSecret: string;
  caFile: string;
}

/**
 * A Soroban RPC stand-in in this process (there is no Stellar node to run
 * here: docs/decisions.md, "Stellar stand-in"), presenting itself as
 * stellar:testnet over HTTPS with a test authority's certificate, written to a
 * file so buyers' clients on this machine can trust it.
 */
async function startLocalStellar(port: number | undefined): Promise<LocalStellar> {
  const standin = await startStellarStandin(port === undefined ? {} : { port });
  const caFile = join(mkdtempSync(join(tmpdir(), "c402-stellar-")), "ca.pem");
  writeFileSync(caFile, standin.caCertificatePem);
  return { standin, facilitatorSecret: standin.fundedAccount().secret, caFile };
}

/** The local Solana devnet and the fee payer the Solana rail co-signs with (a fresh key, funded there, for this run). */
interface LocalSolana {
  devnet: SolanaDevnet;
  feePayerKey: string;
}

/** 1,000 SOL: network fees for millions of settlements on the local devnet. */
const LOCAL_FEE_PAYER_LAMPORTS = 1_000_000_000_000n;

async function startLocalSolana(port: number | undefined): Promise<LocalSolana> {
  const devnet = await startSolanaDevnet(port === undefined ? {} : { port });
  try {
    const { secretKey } = await devnet.fundedKeyPair(LOCAL_FEE_PAYER_LAMPORTS);
    return { devnet, feePayerKey: secretKey };
  } catch (err) {
    await devnet.close();
    throw err;
  }
}

/** Everything after the devchain: the database, the bus, every service and the gateway. */
async function startOnDevchain(
  opts: EmbeddedOptions,
  logger: Logger,
  host: string,
  secrets: Secrets,
  devchain: RunningDevchain,
  solana: LocalSolana | undefined,
  stellar: LocalStellar | undefined,
): Promise<EmbeddedSystem> {
  const pg = await EmbeddedPostgres.open({
    ...(opts.dataDir === ":memory:" ? {} : { dataDir: join(opts.dataDir, "pg") }),
    onUpkeepError: (err) => logger.warn({ err }, "database upkeep round (vacuum, checkpoint) failed; the next one retries"),
    onLost: (reason) => {
      logger.fatal({ err: reason }, "the embedded database stopped: every statement fails from now on");
      opts.onDatabaseLost?.(reason);
    },
  });
  const bus = await DatabaseBus.open(
    pg.forSchema("bus"),
    (err, topic, attempt) => logger.warn({ err, topic, attempt }, "event handler failed; retrying"),
    (err, topic) => logger.error({ err, topic }, "event bus round failed; retrying"),
    deadLetterPolicy(opts.deadLetterAfterAttempts ?? defaultOf(busSpec.deadLetterAfterAttempts), pg.forSchema("bus"), logger),
  );
  const cache = new MemoryCache();
  const servers: RpcServer[] = [];
  const modules: ServiceModule[] = [];
  const addresses: Record<string, string> = {};
  const channels: Record<string, InProcessChannel> = {};

  const port = opts.port ?? gatewayDefaults.port;
  const allowLoopback = opts.outboundAllowLoopback ?? true;
  const outbound = { allowLoopback, allowAddresses: [], resolveNames: opts.outboundResolveNames ?? true };
  // A throwaway install (":memory:") writes its mail to a temporary directory, still readable while it runs.
  const mailer = identityMailer({
    smtpUrl: opts.smtpUrl,
    mailFrom: opts.mailFrom ?? identityDefaults.mailFrom,
    dataDir: opts.dataDir === ":memory:" ? mkdtempSync(join(tmpdir(), "c402-mail-")) : opts.dataDir,
  });
  /** Serves a service on a loopback port (for callers outside this process) and answers its channel for those inside. */
  async function serve(module: ServiceModule): Promise<InProcessChannel> {
    const server = new RpcServer({ onError: rpcFailureLog(logger), callers });
    module.register(server);
    const grpcPort = await server.listen("127.0.0.1", 0);
    servers.push(server);
    modules.push(module);
    channels[module.name] = server.inProcess();
    addresses[module.name] = `127.0.0.1:${grpcPort}`;
    return channels[module.name] as InProcessChannel;
  }

  // How each service is built here; its clients are those of the services it calls, started before it.
  const build: { [N in ServiceName]: (deps: ServiceDeps, clients: Clients) => Promise<ServiceModule> } = {
    identity: (deps) => createIdentityService(deps, { ...identityDefaults, baseUrl: opts.baseUrl ?? `http://${host}:${port}`, dataDir: opts.dataDir }, mailer),
    "content-grants": (deps) => createContentGrantsService(deps, { grantKeyring: parseKeyring(secrets.grantKeyring) }),
    catalog: (deps, c) => createCatalogService(deps, { identity: c.identity, fulfillment: c.fulfillment }),
    payments: (deps, c) =>
      createPaymentsService(
        deps,
        { catalog: c.catalog, fulfillment: c.fulfillment, escrow: c.escrow },
        {
          subjectSecret: secrets.subjectSecret,
          liveChains: [devchainSettlement(devchain)],
          // Escrow sales deposit into the devchain's escrow contract, through the escrow service (ADR 19).
          escrowContract: devchain.escrow,
          ...(opts.scheduleRehearsalDaySeconds !== undefined ? { scheduleRehearsalDaySeconds: opts.scheduleRehearsalDaySeconds } : {}),
          ...(solana
            ? { solana: { network: solana.devnet.network, rpcUrl: solana.devnet.url, usdcMint: solana.devnet.usdcMint, feePayerKey: solana.feePayerKey } }
            : {}),
          ...(stellar
            ? {
                stellar: {
                  network: stellar.standin.network,
                  rpcUrl: stellar.standin.url,
                  usdcContract: stellar.standin.usdc,
                  facilitatorSecret: stellar.facilitatorSecret,
                  channelSecrets: [],
                  rpcCaPem: stellar.standin.caCertificatePem,
                  ledgerSeconds: stellar.standin.ledgerSeconds,
                },
              }
            : {}),
        },
      ),
    fulfillment: (deps) =>
      createFulfillmentService(deps, {
        keyring: parseKeyring(secrets.secretsKeyring),
        outbound,
      }),
    webhooks: (deps) =>
      createWebhooksService(deps, {
        baseUrl: opts.baseUrl ?? `http://${host}:${port}`,
        keyring: parseKeyring(secrets.webhookSecretsKeyring),
        outbound,
      }),
    escrow: (deps) =>
      createEscrowService(
        deps,
        // Arbiters' gas balances are read, and escrows held, on the live chain: the devchain, its escrow
        // contract, and a relayer key of its own (never the facilitator's, ADR 11).
        escrowSettingsOf({
          defaultArbiterEvm: opts.escrowDefaultArbiterEvm,
          defaultArbiterSvm: opts.escrowDefaultArbiterSvm,
          evmNetwork: devchain.network,
          evmRpcUrl: devchain.url,
          escrowContract: devchain.escrow,
          escrowUsdc: devchain.usdc,
          escrowUsdcName: devchain.usdcName,
          escrowRelayerKey: devchainSettlement(devchain).escrowRelayerKey,
        }),
      ),
    schedules: (deps, c) =>
      createSchedulesService(
        deps,
        c.payments,
        // A live series is charged by the devchain's clock (its latest block time), as payments anchored its windows.
        schedulesSettingsOf({ ...schedulesDefaults, baseUrl: opts.baseUrl ?? `http://${host}:${port}`, evmNetwork: devchain.network, evmRpcUrl: devchain.url }),
      ),
    // Wallets live on the devchain (its USDC at the canonical Base Sepolia address) and, when it runs, the local Solana devnet.
    "spending-wallets": (deps) =>
      createSpendingWalletsService(
        deps,
        spendingWalletsSettingsOf(
          {
            ...spendingWalletsDefaults,
            evmNetwork: devchain.network,
            evmRpcUrl: devchain.url,
            evmUsdcAddress: devchain.usdc,
            outboundAllowLoopback: allowLoopback,
            outboundResolveNames: outbound.resolveNames,
            ...(solana
              ? { solanaEnabled: true, solanaNetwork: solana.devnet.network, solanaRpcUrl: solana.devnet.url, solanaUsdcMint: solana.devnet.usdcMint }
              : {}),
          },
          parseKeyring(secrets.spendingWalletsKeyring),
        ),
      ),
  };
  // One process, one caller: its services still refuse a call without its token, as in distributed mode.
  const token = randomBytes(32).toString("hex");
  const callers = parseCallers(formatCallers({ embedded: token }));
  const serviceClients = {} as Clients;
  const health: Record<string, ServiceClient<typeof healthV1.HealthService>> = {};
  const started: ServiceModule[] = [];
  // Stops, newest first, whatever of the system is running (also what a failed start had started).
  const stopServices = async () => {
    for (const c of [...Object.values(serviceClients), ...Object.values(health)]) c.close();
    for (const s of servers) await s.stop(2_000);
    for (const m of started.reverse()) await m.stop();
    await bus.close();
    await cache.close();
    await pg.close();
  };
  let gateway: StartedGateway;
  try {
    for (const s of SERVICES) {
      const deps: ServiceDeps = { database: pg.forSchema(s.database.schema), bus, logger: logger.child({ component: s.name }) };
      const channel = await serve(await build[s.name](deps, serviceClients));
      (serviceClients as Record<ServiceName, unknown>)[s.name] = createClient(CONTRACTS[s.name], channel, { token });
    }
    for (const m of modules) {
      await m.start();
      started.push(m);
    }
    for (const server of servers) server.serving();
    for (const [name, channel] of Object.entries(channels)) health[name] = createClient(healthV1.HealthService, channel, { token });
    gateway = await startGateway({
      host,
      port,
      baseUrl: opts.baseUrl,
      siteUrl: opts.siteUrl,
      settings: {
        serviceName: opts.serviceName ?? gatewayDefaults.serviceName,
        version: SERVICE_VERSION,
        runMode: "embedded",
        authRateLimitPerMinute: opts.authRateLimitPerMinute ?? gatewayDefaults.authRateLimitPerMinute,
        ...(opts.authFailureLimitPerMinute !== undefined ? { authFailureLimitPerMinute: opts.authFailureLimitPerMinute } : {}),
        ...(opts.packageCallsPerMinute !== undefined ? { packageCallsPerMinute: opts.packageCallsPerMinute } : {}),
        ...(opts.trustProxy !== undefined ? { trustProxy: opts.trustProxy } : {}),
        healthExtras: {
          devchain: { url: devchain.url, network: devchain.network, usdc: devchain.usdc, split_factory: devchain.splitFactory },
          ...(solana ? { solana_devnet: { url: solana.devnet.url, network: solana.devnet.network, usdc: solana.devnet.usdcMint } } : {}),
          ...(stellar
            ? { stellar_standin: { url: stellar.standin.url, network: stellar.standin.network, usdc: stellar.standin.usdc, ca_file: stellar.caFile } }
            : {}),
        },
      },
      clients: { ...serviceClients, contentGrants: serviceClients["content-grants"], spendingWallets: serviceClients["spending-wallets"], health },
      cache,
      logger: logger.child({ component: "gateway" }),
    });
  } catch (err) {
    await stopServices().catch((stopErr: unknown) => logger.warn({ err: stopErr }, "stopping after a failed start"));
    throw err;
  }

  return {
    gateway,
    devchain,
    ...(solana ? { solanaDevnet: solana.devnet } : {}),
    ...(stellar ? { stellar: { standin: stellar.standin, caFile: stellar.caFile } } : {}),
    grpcAddresses: addresses,
    rpcToken: token,
    mail: mailer.describe(),
    origins: allowLoopback ? "loopback origins allowed" : "loopback origins refused",
    async stop() {
      await gateway.close();
      await stopServices();
      await devchain.stop();
      await solana?.devnet.close();
      await stellar?.standin.close();
    },
  };
}
