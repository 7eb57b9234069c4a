import type { Subscription } from "@c402/bus";
import type { ConfigOf } from "@c402/config";
import { healthV1, identityV1, TOPICS } from "@c402/contracts";
import { migrate } from "@c402/db";
import { createMailer, type Mailer } from "@c402/mailer";
import { serviceOutboxRelay, standardHealth, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { identityConfigSpec } from "./config";
import { Identity } from "./domain/identity";
import { MagicLinks } from "./domain/magic-link";
import { subscribeAccountActivity } from "./events/account-activity-consumer";
import { identityRpc } from "./rpc/identity-rpc";
import { magicLinkRpc } from "./rpc/magic-link-rpc";
import { oauthRpc } from "./rpc/oauth-rpc";
import { embedRpc } from "./rpc/embed-rpc";
import { EmbedSettings } from "./domain/embed";
import { OAuthServer } from "./domain/oauth";
import { identityInitial } from "./store/migrations/0001_identity";
import { identitySessions } from "./store/migrations/0002_sessions";
import { apiKeysPageIndex } from "./store/migrations/0003_api_keys_page";
import { accountEvents } from "./store/migrations/0004_account_events";
import { profiles } from "./store/migrations/0005_profiles";
import { magicLinks } from "./store/migrations/0006_magic_links";
import { payoutWalletDefaults } from "./store/migrations/0008_payout_wallets";
import { platformSettings } from "./store/migrations/0009_platform_settings";
import { oauth } from "./store/migrations/0010_oauth";
import { embedSettings } from "./store/migrations/0011_embed_settings";
import { passUses } from "./store/migrations/0012_pass_uses";
import { identityOutbox } from "./store/migrations/0013_outbox";
import { passUsesMoved } from "./store/migrations/0014_pass_uses_moved";

export { identityConfigSpec } from "./config";
export const IDENTITY_SCHEMA = "identity";
export const identityMigrations = {
  "0001_identity": identityInitial,
  "0002_sessions": identitySessions,
  "0003_api_keys_page": apiKeysPageIndex,
  "0004_account_events": accountEvents,
  "0005_profiles": profiles,
  "0006_magic_links": magicLinks,
  "0008_payout_wallets": payoutWalletDefaults,
  "0009_platform_settings": platformSettings,
  "0010_oauth": oauth,
  "0011_embed_settings": embedSettings,
  "0012_pass_uses": passUses,
  "0013_outbox": identityOutbox,
  "0014_pass_uses_moved": passUsesMoved,
};

/**
 * The mailer of sign-in links: SMTP when SMTP_URL is set, otherwise .eml files
 * under DATA_DIR/mail (so sign-in works offline); `describe()` says which.
 */
export function identityMailer(config: Pick<ConfigOf<typeof identityConfigSpec>, "smtpUrl" | "mailFrom" | "dataDir">): Mailer {
  return createMailer({ ...(config.smtpUrl !== undefined ? { smtpUrl: config.smtpUrl } : {}), dataDir: config.dataDir, from: config.mailFrom });
}

export async function createIdentityService(
  deps: ServiceDeps,
  config: ConfigOf<typeof identityConfigSpec>,
  mailer: Mailer = identityMailer(config),
): Promise<ServiceModule> {
  await migrate(deps.database, identityMigrations);
  const identity = new Identity(deps.database.db, config);
  const magicLinks = new MagicLinks(deps.database.db, mailer, config, deps.logger);
  const oauthServer = new OAuthServer(deps.database.db, config);
  // Publishes only what migration 0014 left in the outbox (pass-use counts for content-grants).
  const relay = serviceOutboxRelay(deps, "identity");
  deps.logger.info(mailer.describe());
  let subscription: Subscription | undefined;
  return {
    name: "identity",
    register(server) {
      server.add(identityV1.IdentityService, {
        ...identityRpc(identity, deps.database.db, oauthServer),
        ...magicLinkRpc(magicLinks),
        ...oauthRpc(oauthServer),
        ...embedRpc(new EmbedSettings(deps.database.db)),
      });
      server.add(healthV1.HealthService, standardHealth(deps, "identity"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.accountActivity, TOPICS.passUsesMoved]);
      relay.start();
      subscription = await subscribeAccountActivity(deps.bus, deps.database.db, (err) =>
        deps.logger.error({ err }, "skipped an account event that cannot be read"),
      );
    },
    async stop() {
      await subscription?.stop();
      await relay.stop();
      await mailer.close();
    },
  };
}
