import { runDistributedService } from "@c402/runtime";
import { parseKeyring } from "@c402/sealed-secrets";
import { contentGrantsConfigSpec, contentGrantsMigrations, createContentGrantsService, CONTENT_GRANTS_SCHEMA } from "./index";

void runDistributedService({
  name: "content-grants",
  schema: CONTENT_GRANTS_SCHEMA,
  spec: contentGrantsConfigSpec,
  migrations: contentGrantsMigrations,
  build: (deps, config) => createContentGrantsService(deps, { grantKeyring: parseKeyring(config.grantKeyring) }),
});
