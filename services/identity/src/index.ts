import type { Subscription } from "@c402/bus";
import type { ConfigOf } from "@c402/config";
import { healthV1, identityV1, TOPICS } from "@c402/contracts";
import { migrate } from "@c402/db";
import { standardHealth, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { identityConfigSpec } from "./config";
import { Identity } from "./domain/identity";
import { subscribeAccountActivity } from "./events/account-activity-consumer";
import { identityRpc } from "./rpc/identity-rpc";
import { identityInitial } from "./store/migrations/0001_identity";
import { identitySessions } from "./store/migrations/0002_sessions";
import { apiKeysPageIndex } from "./store/migrations/0003_api_keys_page";
import { accountEvents } from "./store/migrations/0004_account_events";
import { profiles } from "./store/migrations/0005_profiles";

export { identityConfigSpec } from "./config";
export const IDENTITY_SCHEMA = "identity";
export const identityMigrations = {
  "0001_identity": identityInitial,
  "0002_sessions": identitySessions,
  "0003_api_keys_page": apiKeysPageIndex,
  "0004_account_events": accountEvents,
  "0005_profiles": profiles,
};

export async function createIdentityService(deps: ServiceDeps, config: ConfigOf<typeof identityConfigSpec>): Promise<ServiceModule> {
  await migrate(deps.database, identityMigrations);
  const identity = new Identity(deps.database.db, config);
  let subscription: Subscription | undefined;
  return {
    name: "identity",
    register(server) {
      server.add(identityV1.IdentityService, identityRpc(identity, deps.database.db));
      server.add(healthV1.HealthService, standardHealth(deps, "identity"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.accountActivity]);
      subscription = await subscribeAccountActivity(deps.bus, deps.database.db, (err) =>
        deps.logger.error({ err }, "skipped an account event that cannot be read"),
      );
    },
    async stop() {
      await subscription?.stop();
    },
  };
}
