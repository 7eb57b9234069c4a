import type { Subscription } from "@c402/bus";
import { contentGrantsV1, healthV1, TOPICS } from "@c402/contracts";
import { migrate } from "@c402/db";
import { serviceOutboxRelay, standardHealth, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { TokenTagger, type Keyring } from "@c402/sealed-secrets";
import { Passes } from "./domain/passes";
import { subscribePassUsesMoved } from "./events/pass-uses-moved-consumer";
import { contentGrantsRpc } from "./rpc/content-grants-rpc";
import type { ContentGrantsDb } from "./store/pass-store";
import { passUses } from "./store/migrations/0001_pass_uses";
import { contentGrantsOutbox } from "./store/migrations/0002_outbox";
import { contentGrantsProcessedEvents } from "./store/migrations/0003_processed_events";

export const CONTENT_GRANTS_SCHEMA = "content_grants";
export { contentGrantsConfigSpec } from "./config";
export { Passes, PASS_LIMITS, type IssuePass, type PassCheck, type PassScope } from "./domain/passes";
export const contentGrantsMigrations = {
  "0001_pass_uses": passUses,
  "0002_outbox": contentGrantsOutbox,
  "0003_processed_events": contentGrantsProcessedEvents,
};

export interface ContentGrantsSettings {
  /** The keys that sign passes (GRANT_KEYRING): the first signs, every one checks. */
  grantKeyring: Keyring;
}

/**
 * Gated content's passes (the spec's Grant): minted, checked with no query, a
 * limited pass's reads counted. Its only state is those counts; its only
 * events are sellers' pass.issued account events, through its outbox.
 */
export async function createContentGrantsService(deps: ServiceDeps, settings: ContentGrantsSettings): Promise<ServiceModule> {
  await migrate(deps.database, contentGrantsMigrations);
  const db = deps.database.db as ContentGrantsDb;
  const relay = serviceOutboxRelay(deps, "content-grants");
  const passes = new Passes(
    db,
    new TokenTagger(settings.grantKeyring),
    () => new Date(),
    () => relay.poke(),
  );
  let subscription: Subscription | undefined;
  return {
    name: "content-grants",
    register(server) {
      server.add(contentGrantsV1.ContentGrantsService, contentGrantsRpc(passes));
      server.add(healthV1.HealthService, standardHealth(deps, "content-grants"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.accountActivity, TOPICS.passUsesMoved]);
      relay.start();
      subscription = await subscribePassUsesMoved(deps.bus, db);
    },
    async stop() {
      await subscription?.stop();
      await relay.stop();
    },
  };
}
