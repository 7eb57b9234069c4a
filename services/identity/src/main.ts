import { runDistributedService } from "@c402/runtime";
import { createIdentityService, identityConfigSpec, identityMigrations, IDENTITY_SCHEMA } from "./index";

void runDistributedService({
  name: "identity",
  schema: IDENTITY_SCHEMA,
  spec: identityConfigSpec,
  migrations: identityMigrations,
  build: (deps, config) => createIdentityService(deps, config),
});
