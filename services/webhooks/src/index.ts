import type { Subscription } from "@c402/bus";
import { healthV1, TOPICS, webhooksV1 } from "@c402/contracts";
import { migrate } from "@c402/db";
import { createGuardedFetch, outboundPolicyOf, type OutboundSettings } from "@c402/outbound-http";
import { serviceOutboxRelay, standardHealth, startPeriodic, type PeriodicTask, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { SecretSealer, type Keyring } from "@c402/sealed-secrets";
import { Dispatcher } from "./domain/dispatcher";
import { Endpoints } from "./domain/endpoints";
import { SigningKeys } from "./domain/signing-keys";
import { SOURCE_TOPICS, subscribeWebhookSources } from "./events/event-consumer";
import { webhooksRpc } from "./rpc/webhooks-rpc";
import { webhooksInitial } from "./store/migrations/0001_webhooks";
import { webhooksProcessedEvents } from "./store/migrations/0002_processed_events";
import { webhookDelivery } from "./store/migrations/0003_delivery";
import { webhooksOutbox } from "./store/migrations/0004_outbox";

export const WEBHOOKS_SCHEMA = "webhooks";
export { webhooksConfigSpec } from "./config";
export { Dispatcher } from "./domain/dispatcher";
export { Endpoints } from "./domain/endpoints";
export { SigningKeys } from "./domain/signing-keys";
export const webhooksMigrations = {
  "0001_webhooks": webhooksInitial,
  "0002_processed_events": webhooksProcessedEvents,
  "0003_delivery": webhookDelivery,
  "0004_outbox": webhooksOutbox,
};

export interface WebhooksSettings {
  /** The public base URL (receipt_url in payloads). */
  baseUrl: string;
  /** Seals endpoint secrets and the private signing keys (WEBHOOK_SECRETS_KEYRING). */
  keyring: Keyring;
  /** Where receivers may be: loopback only on a developer's machine (embedded mode). */
  outbound: OutboundSettings;
  timeoutMs?: number;
  concurrency?: number;
  signingKeyDays?: number;
}

/** How often the signing key's age is checked (it rotates at WEBHOOK_SIGNING_KEY_DAYS). */
const KEY_AGE_CHECK_MS = 3_600_000;

export async function createWebhooksService(deps: ServiceDeps, settings: WebhooksSettings): Promise<ServiceModule> {
  await migrate(deps.database, webhooksMigrations);
  const db = deps.database.db;
  const relay = serviceOutboxRelay(deps, "webhooks");
  const sealer = new SecretSealer(settings.keyring);
  const timeoutMs = settings.timeoutMs ?? 10_000;
  // Redirects are answers, never followed; a receiver's reply body is not read past 64 KiB.
  const fetch = createGuardedFetch(outboundPolicyOf(settings.outbound, { maxRedirects: 0, timeoutMs, maxResponseBytes: 64 * 1024 }));
  const keys = new SigningKeys({ db, sealer, clock: () => new Date(), rotateAfterMs: (settings.signingKeyDays ?? 90) * 86_400_000 });
  const endpoints = new Endpoints({
    db,
    sealer,
    clock: () => new Date(),
    refusal: (url) => fetch.refusalOf(url)?.message,
    allowPlainHttp: settings.outbound.allowLoopback,
    onCommitted: () => relay.poke(),
  });
  const dispatcher = new Dispatcher({
    db,
    sealer,
    keys,
    fetch,
    baseUrl: settings.baseUrl.replace(/\/+$/, ""),
    timeoutMs,
    concurrency: settings.concurrency ?? 32,
    logger: deps.logger,
    onOutbox: () => relay.poke(),
  });
  let subscriptions: Subscription[] = [];
  let keyAge: PeriodicTask | undefined;
  return {
    name: "webhooks",
    register(server) {
      server.add(webhooksV1.WebhooksService, webhooksRpc(db, endpoints, keys));
      server.add(healthV1.HealthService, standardHealth(deps, "webhooks"));
    },
    async start() {
      await keys.ensure();
      await deps.bus.ensureTopics([...SOURCE_TOPICS, TOPICS.accountActivity]);
      relay.start();
      dispatcher.start();
      subscriptions = await subscribeWebhookSources(deps.bus, dispatcher);
      keyAge = startPeriodic({ name: "signing-key age", intervalMs: KEY_AGE_CHECK_MS, round: () => keys.ensure(), logger: deps.logger });
    },
    async stop() {
      await keyAge?.stop();
      await Promise.all(subscriptions.map((s) => s.stop()));
      await dispatcher.stop();
      await relay.stop();
      await fetch.close();
    },
  };
}
