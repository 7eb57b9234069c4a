import { fulfillmentV1, healthV1, ORIGIN_TIMEOUT_MAX_MS, TOPICS } from "@c402/contracts";
import { migrate } from "@c402/db";
import { serviceOutboxRelay, standardHealth, startPeriodic, type PeriodicTask, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { createGuardedFetch, outboundPolicyOf, type OutboundSettings } from "@c402/outbound-http";
import { SecretSealer, type Keyring } from "@c402/sealed-secrets";
import { McpTools } from "./domain/mcp-tools";
import { OriginKeys } from "./domain/origin-keys";
import { fulfillmentRpc } from "./rpc/fulfillment-rpc";
import { originKeysInitial } from "./store/migrations/0001_origin_keys";
import { fulfillmentOutbox } from "./store/migrations/0002_outbox";
import { relayDeliveries } from "./store/migrations/0003_relay";
import { RelayDeliveries } from "./domain/relay-deliveries";
import { Packages } from "./domain/packages";
import { packages as packagesMigration } from "./store/migrations/0004_packages";
import { deliveryAccount } from "./store/migrations/0005_delivery_account";

export const FULFILLMENT_SCHEMA = "fulfillment";
export { fulfillmentConfigSpec } from "./config";
export { OriginKeys } from "./domain/origin-keys";
export { RelayDeliveries } from "./domain/relay-deliveries";
export { Packages } from "./domain/packages";
export const fulfillmentMigrations = {
  "0001_origin_keys": originKeysInitial,
  "0002_outbox": fulfillmentOutbox,
  "0003_relay": relayDeliveries,
  "0004_packages": packagesMigration,
  "0005_delivery_account": deliveryAccount,
};
/** How often package calls a crash cut off are given back. */
export const PACKAGE_SWEEP_INTERVAL_MS = 10_000;

export interface FulfillmentSettings {
  /** The master keys that seal stored credentials (SECRETS_KEYRING; embedded mode keeps one under its data directory). */
  keyring: Keyring;
  /** Who sellers' origins may be: loopback only on a developer's machine (embedded mode), chosen private addresses where an operator allows them. */
  outbound: OutboundSettings;
}

export async function createFulfillmentService(deps: ServiceDeps, settings: FulfillmentSettings): Promise<ServiceModule> {
  await migrate(deps.database, fulfillmentMigrations);
  const relay = serviceOutboxRelay(deps, "fulfillment");
  const sealer = new SecretSealer(settings.keyring);
  const originKeys = new OriginKeys({ db: deps.database.db, sealer, onCommitted: () => relay.poke() });
  // Each call sets its own deadline (ADR 9); the guard's own bound is the longest any call may have.
  const outboundFetch = createGuardedFetch(outboundPolicyOf(settings.outbound, { timeoutMs: ORIGIN_TIMEOUT_MAX_MS }));
  const mcpTools = new McpTools({ fetch: outboundFetch, originKeys });
  const deliveries = new RelayDeliveries({ db: deps.database.db, sealer, originKeys, fetch: outboundFetch });
  const packages = new Packages({ db: deps.database.db, relay: deliveries });
  let sweep: PeriodicTask | undefined;
  return {
    name: "fulfillment",
    register(server) {
      server.add(fulfillmentV1.FulfillmentService, fulfillmentRpc(originKeys, mcpTools, deliveries, packages));
      server.add(healthV1.HealthService, standardHealth(deps, "fulfillment"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.accountActivity]);
      relay.start();
      // Calls a crash cut off are given back once past their deadline (and at once on start, for the ones already past it).
      await packages.sweep();
      sweep = startPeriodic({ name: "package-call sweep", intervalMs: PACKAGE_SWEEP_INTERVAL_MS, round: () => packages.sweep(), logger: deps.logger });
    },
    async stop() {
      await sweep?.stop();
      await relay.stop();
      await outboundFetch.close();
    },
  };
}
