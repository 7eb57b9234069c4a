import type { Subscription } from "@c402/bus";
import { catalogV1, healthV1, identityV1, TOPICS } from "@c402/contracts";
import { subscribePaymentSettled } from "./events/payment-settled-consumer";
import { migrate } from "@c402/db";
import type { ServiceClient } from "@c402/rpc";
import { standardHealth, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { Catalog } from "./domain/catalog";
import { catalogRpc } from "./rpc/catalog-rpc";
import { catalogInitial } from "./store/migrations/0001_catalog";
import { catalogProcessedEvents } from "./store/migrations/0002_processed_events";
import { checkoutsPageIndex } from "./store/migrations/0003_checkouts_page";
import { idempotencyKeysPerMode } from "./store/migrations/0004_idempotency_mode";

export { catalogConfigSpec } from "./config";
export const CATALOG_SCHEMA = "catalog";
export const catalogMigrations = {
  "0001_catalog": catalogInitial,
  "0002_processed_events": catalogProcessedEvents,
  "0003_checkouts_page": checkoutsPageIndex,
  "0004_idempotency_mode": idempotencyKeysPerMode,
};

export interface CatalogClients {
  identity: ServiceClient<typeof identityV1.IdentityService>;
}

export async function createCatalogService(deps: ServiceDeps, clients: CatalogClients): Promise<ServiceModule> {
  await migrate(deps.database, catalogMigrations);
  let subscription: Subscription | undefined;
  const catalog = new Catalog(deps.database.db, async (accountId) => (await clients.identity.getPayoutWallets({ accountId })).wallets);
  return {
    name: "catalog",
    register(server) {
      server.add(catalogV1.CatalogService, catalogRpc(catalog));
      server.add(healthV1.HealthService, standardHealth(deps, "catalog"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.paymentSettled]);
      subscription = await subscribePaymentSettled(deps.bus, deps.database.db);
    },
    async stop() {
      await subscription?.stop();
    },
  };
}
