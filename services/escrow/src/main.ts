import { runDistributedService } from "@c402/runtime";
import { createEscrowService, escrowConfigSpec, escrowMigrations, escrowSettingsOf, ESCROW_SCHEMA } from "./index";

void runDistributedService({
  name: "escrow",
  schema: ESCROW_SCHEMA,
  spec: escrowConfigSpec,
  migrations: escrowMigrations,
  build: (deps, config) => createEscrowService(deps, escrowSettingsOf(config)),
});
