import { RedisCache } from "@c402/cache";
import { describeConfig, loadConfig } from "@c402/config";
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
import { createLogger } from "@c402/logging";
import { createClient } from "@c402/rpc";
import { callerToken, onShutdown, startObservability } from "@c402/runtime";
import { gatewayConfigSpec, gatewayDistributedSpec, SERVICE_VERSION, startGateway } from "./index";

/** Distributed-mode composition root: the gateway as its own process. */
async function main() {
  const spec = { ...gatewayConfigSpec, ...gatewayDistributedSpec };
  const config = loadConfig(spec);
  const logger = createLogger({ service: "gateway", level: config.logLevel });
  logger.info({ config: describeConfig(spec, config) }, "starting");
  const observability = await startObservability("gateway", config, logger);
  const addresses = {
    identity: config.identityAddress,
    "content-grants": config.contentGrantsAddress,
    catalog: config.catalogAddress,
    payments: config.paymentsAddress,
    fulfillment: config.fulfillmentAddress,
    webhooks: config.webhooksAddress,
    escrow: config.escrowAddress,
    schedules: config.schedulesAddress,
    "spending-wallets": config.spendingWalletsAddress,
  };
  // Every call presents the gateway's RPC_TOKEN: the services refuse callers they do not list.
  const as = { token: callerToken(config) };
  const clients = {
    identity: createClient(identityV1.IdentityService, addresses.identity, as),
    contentGrants: createClient(contentGrantsV1.ContentGrantsService, addresses["content-grants"], as),
    catalog: createClient(catalogV1.CatalogService, addresses.catalog, as),
    payments: createClient(paymentsV1.PaymentsService, addresses.payments, as),
    fulfillment: createClient(fulfillmentV1.FulfillmentService, addresses.fulfillment, as),
    webhooks: createClient(webhooksV1.WebhooksService, addresses.webhooks, as),
    escrow: createClient(escrowV1.EscrowService, addresses.escrow, as),
    schedules: createClient(schedulesV1.SchedulesService, addresses.schedules, as),
    spendingWallets: createClient(spendingWalletsV1.SpendingWalletsService, addresses["spending-wallets"], as),
    health: Object.fromEntries(Object.entries(addresses).map(([name, address]) => [name, createClient(healthV1.HealthService, address, as)])),
  };
  const cache = new RedisCache(config.redisUrl);
  const gateway = await startGateway({
    host: config.host,
    port: config.port,
    baseUrl: config.baseUrl,
    siteUrl: config.siteUrl,
    settings: {
      serviceName: config.serviceName,
      version: SERVICE_VERSION,
      runMode: "distributed",
      authRateLimitPerMinute: config.authRateLimitPerMinute,
      authFailureLimitPerMinute: config.authFailureLimitPerMinute,
      packageCallsPerMinute: config.packageCallsPerMinute,
      trustProxy: config.trustProxy,
      ...(config.devchainUrl || config.solanaDevnetUrl || config.stellarStandinUrl
        ? {
            healthExtras: {
              ...(config.devchainUrl ? { devchain: { url: config.devchainUrl } } : {}),
              ...(config.solanaDevnetUrl ? { solana_devnet: { url: config.solanaDevnetUrl } } : {}),
              ...(config.stellarStandinUrl
                ? { stellar_standin: { url: config.stellarStandinUrl, ...(config.stellarStandinCaFile ? { ca_file: config.stellarStandinCaFile } : {}) } }
                : {}),
            },
          }
        : {}),
    },
    clients,
    cache,
    logger,
  });
  logger.info({ url: gateway.baseUrl }, "gateway listening");
  onShutdown(logger, async () => {
    await gateway.close();
    await cache.close();
    await observability.stop();
  });
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
