import { fulfillmentV1, healthV1, TOPICS } from "@c402/contracts";
import { migrate } from "@c402/db";
import { serviceOutboxRelay, standardHealth, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { SecretSealer, type Keyring } from "@c402/sealed-secrets";
import { OriginKeys } from "./domain/origin-keys";
import { fulfillmentRpc } from "./rpc/fulfillment-rpc";
import { originKeysInitial } from "./store/migrations/0001_origin_keys";
import { fulfillmentOutbox } from "./store/migrations/0002_outbox";

export const FULFILLMENT_SCHEMA = "fulfillment";
export { fulfillmentConfigSpec } from "./config";
export { OriginKeys } from "./domain/origin-keys";
export const fulfillmentMigrations = { "0001_origin_keys": originKeysInitial, "0002_outbox": fulfillmentOutbox };

export interface FulfillmentSettings {
  /** The master keys that seal stored credentials (SECRETS_KEYRING; embedded mode keeps one under its data directory). */
  keyring: Keyring;
}

export async function createFulfillmentService(deps: ServiceDeps, settings: FulfillmentSettings): Promise<ServiceModule> {
  await migrate(deps.database, fulfillmentMigrations);
  const relay = serviceOutboxRelay(deps);
  const originKeys = new OriginKeys({ db: deps.database.db, sealer: new SecretSealer(settings.keyring), onCommitted: () => relay.poke() });
  return {
    name: "fulfillment",
    register(server) {
      server.add(fulfillmentV1.FulfillmentService, fulfillmentRpc(originKeys));
      server.add(healthV1.HealthService, standardHealth(deps, "fulfillment"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.accountActivity]);
      relay.start();
    },
    async stop() {
      await relay.stop();
    },
  };
}
