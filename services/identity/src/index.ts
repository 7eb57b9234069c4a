import type { ConfigOf } from "@c402/config";
import { healthV1, identityV1 } from "@c402/contracts";
import { migrate } from "@c402/db";
import { standardHealth, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { identityConfigSpec } from "./config";
import { Identity } from "./domain/identity";
import { identityRpc } from "./rpc/identity-rpc";
import { identityInitial } from "./store/migrations/0001_identity";
import { identitySessions } from "./store/migrations/0002_sessions";
import { apiKeysPageIndex } from "./store/migrations/0003_api_keys_page";

export { identityConfigSpec } from "./config";
export const IDENTITY_SCHEMA = "identity";
export const identityMigrations = { "0001_identity": identityInitial, "0002_sessions": identitySessions, "0003_api_keys_page": apiKeysPageIndex };

export async function createIdentityService(deps: ServiceDeps, config: ConfigOf<typeof identityConfigSpec>): Promise<ServiceModule> {
  await migrate(deps.database, identityMigrations);
  const identity = new Identity(deps.database.db, config);
  return {
    name: "identity",
    register(server) {
      server.add(identityV1.IdentityService, identityRpc(identity));
      server.add(healthV1.HealthService, standardHealth(deps, "identity"));
    },
    async start() {},
    async stop() {},
  };
}
