import { fulfillmentV1, identityV1 } from "@c402/contracts";
import { runDistributedService } from "@c402/runtime";
import { catalogConfigSpec, catalogMigrations, CATALOG_SCHEMA, createCatalogService } from "./index";

void runDistributedService({
  name: "catalog",
  schema: CATALOG_SCHEMA,
  spec: catalogConfigSpec,
  migrations: catalogMigrations,
  build: (deps, config, connect) =>
    createCatalogService(deps, {
      identity: connect(identityV1.IdentityService, config.identityAddress),
      fulfillment: connect(fulfillmentV1.FulfillmentService, config.fulfillmentAddress),
    }),
});
