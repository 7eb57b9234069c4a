import { runDistributedService } from "@c402/runtime";
import { outboundSettingsOf } from "@c402/outbound-http";
import { parseKeyring } from "@c402/sealed-secrets";
import { createFulfillmentService, fulfillmentConfigSpec, fulfillmentMigrations, FULFILLMENT_SCHEMA } from "./index";

void runDistributedService({
  name: "fulfillment",
  schema: FULFILLMENT_SCHEMA,
  spec: fulfillmentConfigSpec,
  migrations: fulfillmentMigrations,
  build: (deps, config) =>
    createFulfillmentService(deps, {
      keyring: parseKeyring(config.secretsKeyring),
      outbound: outboundSettingsOf(config),
    }),
});
