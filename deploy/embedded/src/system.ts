import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseBus } from "@c402/bus";
import { MemoryCache } from "@c402/cache";
import { catalogV1, healthV1, identityV1, paymentsV1, webhooksV1 } from "@c402/contracts";
import { EmbeddedPostgres } from "@c402/db";
import { devchainSettlement, startDevchain, type RunningDevchain } from "@c402/devchain";
import { createLogger, type Logger } from "@c402/logging";
import { createClient, RpcServer } from "@c402/rpc";
import { rpcFailureLog, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { createCatalogService, CATALOG_SCHEMA } from "@c402/catalog";
import { SERVICE_VERSION, startGateway, type StartedGateway, type TrustProxy } from "@c402/gateway";
import { createIdentityService, IDENTITY_SCHEMA } from "@c402/identity";
import { createPaymentsService, PAYMENTS_SCHEMA } from "@c402/payments";
import { createWebhooksService, WEBHOOKS_SCHEMA } from "@c402/webhooks";

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
  /** Proxies trusted to name the client in X-Forwarded-For (default: none). */
  trustProxy?: TrustProxy;
  /** Port of the local EVM chain the live face settles on (default 8545, or a free one when it is taken; 0 picks a free one). */
  devchainPort?: number;
}

export interface EmbeddedSystem {
  gateway: StartedGateway;
  devchain: RunningDevchain;
  grpcAddresses: Record<string, string>;
  stop(): Promise<void>;
}

interface Secrets {
  subjectSecret: string;
}

/** Secrets of an embedded install, generated on first start and kept beside the data. */
function loadSecrets(dataDir: string): Secrets {
  if (dataDir === ":memory:") return { subjectSecret: randomBytes(32).toString("hex") };
  const file = join(dataDir, "secrets.json");
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as Secrets;
  const secrets: Secrets = { subjectSecret: randomBytes(32).toString("hex") };
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, JSON.stringify(secrets), { mode: 0o600 });
  return secrets;
}

/**
 * Every service in one process: PGlite (one schema per service), the
 * durable embedded bus, the in-memory cache, and real gRPC between the services over loopback
 * on ports the OS picks, so two instances can run side by side.
 */
export async function startEmbeddedSystem(opts: EmbeddedOptions): Promise<EmbeddedSystem> {
  const logger = opts.logger ?? createLogger({ service: "embedded" });
  const host = opts.host ?? "127.0.0.1";
  const secrets = loadSecrets(opts.dataDir);
  // Live settlement runs on a local chain as eip155:84532 (never as Base mainnet: a signature
  // made for chain 8453 could be replayed on the real network).
  const devchain = await startDevchain(opts.devchainPort === undefined ? {} : { port: opts.devchainPort });
  logger.info({ url: devchain.url, network: devchain.network }, "devchain serving");
  const pg = await EmbeddedPostgres.open(opts.dataDir === ":memory:" ? {} : { dataDir: join(opts.dataDir, "pg") });
  const bus = await DatabaseBus.open(pg.forSchema("bus"), (err, topic, attempt) => logger.warn({ err, topic, attempt }, "event handler failed; retrying"));
  const cache = new MemoryCache();
  const servers: RpcServer[] = [];
  const modules: ServiceModule[] = [];
  const addresses: Record<string, string> = {};

  const deps = (service: string, schema: string): ServiceDeps => ({ database: pg.forSchema(schema), bus, logger: logger.child({ component: service }) });
  async function serve(module: ServiceModule): Promise<string> {
    const server = new RpcServer({ onError: rpcFailureLog(logger) });
    module.register(server);
    const port = await server.listen("127.0.0.1", 0);
    servers.push(server);
    modules.push(module);
    addresses[module.name] = `127.0.0.1:${port}`;
    return addresses[module.name] as string;
  }

  const identityAddress = await serve(
    await createIdentityService(deps("identity", IDENTITY_SCHEMA), {
      baseUrl: opts.baseUrl ?? `http://${host}:${opts.port ?? 4020}`,
      challengeTtlSeconds: 600,
    }),
  );
  const identity = createClient(identityV1.IdentityService, identityAddress);
  const catalogAddress = await serve(await createCatalogService(deps("catalog", CATALOG_SCHEMA), { identity }));
  const catalog = createClient(catalogV1.CatalogService, catalogAddress);
  const paymentsAddress = await serve(
    await createPaymentsService(
      deps("payments", PAYMENTS_SCHEMA),
      { catalog },
      {
        subjectSecret: secrets.subjectSecret,
        liveChains: [devchainSettlement(devchain)],
      },
    ),
  );
  const webhooksAddress = await serve(await createWebhooksService(deps("webhooks", WEBHOOKS_SCHEMA)));
  for (const m of modules) await m.start();

  const clients = {
    identity,
    catalog,
    payments: createClient(paymentsV1.PaymentsService, paymentsAddress),
    webhooks: createClient(webhooksV1.WebhooksService, webhooksAddress),
    health: Object.fromEntries(Object.entries(addresses).map(([name, address]) => [name, createClient(healthV1.HealthService, address)])),
  };
  const gateway = await startGateway({
    host,
    port: opts.port ?? 4020,
    baseUrl: opts.baseUrl,
    siteUrl: opts.siteUrl,
    settings: {
      serviceName: opts.serviceName ?? "c402",
      version: SERVICE_VERSION,
      runMode: "embedded",
      authRateLimitPerMinute: opts.authRateLimitPerMinute ?? 30,
      ...(opts.authFailureLimitPerMinute !== undefined ? { authFailureLimitPerMinute: opts.authFailureLimitPerMinute } : {}),
      ...(opts.trustProxy !== undefined ? { trustProxy: opts.trustProxy } : {}),
      healthExtras: { devchain: { url: devchain.url, network: devchain.network, usdc: devchain.usdc, split_factory: devchain.splitFactory } },
    },
    clients,
    cache,
    logger: logger.child({ component: "gateway" }),
  });

  return {
    gateway,
    devchain,
    grpcAddresses: addresses,
    async stop() {
      await gateway.close();
      for (const c of [clients.identity, clients.catalog, clients.payments, clients.webhooks, ...Object.values(clients.health)]) c.close();
      for (const s of servers) await s.stop(2_000);
      for (const m of modules.reverse()) await m.stop();
      await bus.close();
      await cache.close();
      await pg.close();
      await devchain.stop();
    },
  };
}
