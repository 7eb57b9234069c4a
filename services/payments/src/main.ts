import { catalogV1 } from "@c402/contracts";
import { createClient } from "@c402/rpc";
import { runDistributedService } from "@c402/runtime";
import { createPaymentsService, paymentsConfigSpec, PAYMENTS_SCHEMA } from "./index";

void runDistributedService({
  name: "payments",
  schema: PAYMENTS_SCHEMA,
  spec: paymentsConfigSpec,
  build: (deps, config) => createPaymentsService(deps, { catalog: createClient(catalogV1.CatalogService, config.catalogAddress) }, config),
});
