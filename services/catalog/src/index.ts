import type { Subscription } from "@c402/bus";
import { catalogV1, fulfillmentV1, healthV1, identityV1, TOPICS } from "@c402/contracts";
import { originRegistry } from "./rpc/origin-registry";
import { subscribePaymentSettled } from "./events/payment-settled-consumer";
import { migrate } from "@c402/db";
import type { ServiceClient } from "@c402/rpc";
import { serviceOutboxRelay, standardHealth, startPeriodic, type PeriodicTask, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { Catalog } from "./domain/catalog";
import { Reports } from "./domain/reports";
import { catalogRpc } from "./rpc/catalog-rpc";
import { reportRpc } from "./rpc/report-rpc";
import { catalogInitial } from "./store/migrations/0001_catalog";
import { catalogProcessedEvents } from "./store/migrations/0002_processed_events";
import { checkoutsPageIndex } from "./store/migrations/0003_checkouts_page";
import { idempotencyKeysPerMode } from "./store/migrations/0004_idempotency_mode";
import { catalogOutbox } from "./store/migrations/0005_outbox";
import { checkoutLifecycle } from "./store/migrations/0006_lifecycle";
import { checkoutSettings } from "./store/migrations/0007_checkout_settings";
import { checkoutReports } from "./store/migrations/0008_reports";
import { checkoutPayoutRails } from "./store/migrations/0009_payout_rails";
import { offersIndex } from "./store/migrations/0010_offers_index";
import { checkoutPlatformTerms } from "./store/migrations/0011_platform_terms";
import { idempotencyClaims } from "./store/migrations/0012_idempotency_claims";
import { partiesAsSent } from "./store/migrations/0013_parties_as_sent";
import { relayOrigin } from "./store/migrations/0014_relay_origin";
import { mcpTool } from "./store/migrations/0015_mcp_tool";
import { checkoutPackages } from "./store/migrations/0016_packages";
import { checkoutContent } from "./store/migrations/0017_content";
import { retiredTwins } from "./store/migrations/0018_retired_twins";
import { platformFeeRails } from "./store/migrations/0019_platform_fee_rails";
import { escrowCheckouts } from "./store/migrations/0020_escrow_checkouts";
import { scheduleTerms } from "./store/migrations/0021_schedule_terms";

export { catalogConfigSpec } from "./config";
export const CATALOG_SCHEMA = "catalog";
export const catalogMigrations = {
  "0001_catalog": catalogInitial,
  "0002_processed_events": catalogProcessedEvents,
  "0003_checkouts_page": checkoutsPageIndex,
  "0004_idempotency_mode": idempotencyKeysPerMode,
  "0005_outbox": catalogOutbox,
  "0006_lifecycle": checkoutLifecycle,
  "0007_checkout_settings": checkoutSettings,
  "0008_reports": checkoutReports,
  "0009_payout_rails": checkoutPayoutRails,
  "0010_offers_index": offersIndex,
  "0011_platform_terms": checkoutPlatformTerms,
  "0012_idempotency_claims": idempotencyClaims,
  "0013_parties_as_sent": partiesAsSent,
  "0014_relay_origin": relayOrigin,
  "0015_mcp_tool": mcpTool,
  "0016_packages": checkoutPackages,
  "0017_content": checkoutContent,
  "0018_retired_twins": retiredTwins,
  "0019_platform_fee_rails": platformFeeRails,
  "0020_escrow_checkouts": escrowCheckouts,
  "0021_schedule_terms": scheduleTerms,
};

/** How often passed deadlines are recorded (each expired checkout's account event), and how many per round at most. */
export const EXPIRY_SWEEP = { intervalMs: 10_000, batch: 200 };
/** How often idempotency keys past their 24-hour retention are dropped, and how many per round at most. */
export const KEY_REAPER = { intervalMs: 60_000, batch: 1000 };

export interface CatalogClients {
  identity: ServiceClient<typeof identityV1.IdentityService>;
  fulfillment: ServiceClient<typeof fulfillmentV1.FulfillmentService>;
}

export async function createCatalogService(deps: ServiceDeps, clients: CatalogClients): Promise<ServiceModule> {
  await migrate(deps.database, catalogMigrations);
  let subscription: Subscription | undefined;
  let expirySweep: PeriodicTask | undefined;
  let keyReaper: PeriodicTask | undefined;
  const relay = serviceOutboxRelay(deps, "catalog");
  const catalog = new Catalog({
    db: deps.database.db,
    payoutWallets: async (accountId) => (await clients.identity.getPayoutWallets({ accountId })).wallets,
    platform: async (accountId) => {
      const { settings, soldBy } = await clients.identity.getPlatformSettings({ accountId });
      return {
        platformAccount: settings?.platformAccount ?? false,
        platformFeeBps: settings?.platformFeeBps ?? 0,
        platformFeeTo: settings?.platformFeeTo ?? null,
        soldBy: soldBy || null,
      };
    },
    origins: originRegistry(clients.fulfillment),
    onCommitted: () => relay.poke(),
  });
  const reports = new Reports({ db: deps.database.db, onCommitted: () => relay.poke() });
  return {
    name: "catalog",
    register(server) {
      server.add(catalogV1.CatalogService, { ...catalogRpc(catalog), ...reportRpc(reports) });
      server.add(healthV1.HealthService, standardHealth(deps, "catalog"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.paymentSettled, TOPICS.accountActivity, TOPICS.checkoutReported]);
      subscription = await subscribePaymentSettled(deps.bus, deps.database.db);
      relay.start();
      expirySweep = startPeriodic({
        name: "expiry sweep",
        intervalMs: EXPIRY_SWEEP.intervalMs,
        round: () => catalog.recordExpiries(EXPIRY_SWEEP.batch),
        logger: deps.logger,
      });
      keyReaper = startPeriodic({
        name: "idempotency key reaper",
        intervalMs: KEY_REAPER.intervalMs,
        round: () => catalog.reapIdempotencyKeys(KEY_REAPER.batch),
        logger: deps.logger,
      });
    },
    async stop() {
      await expirySweep?.stop();
      await keyReaper?.stop();
      await relay.stop();
      await subscription?.stop();
    },
  };
}
