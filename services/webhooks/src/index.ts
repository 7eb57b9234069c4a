import type { Subscription } from "@c402/bus";
import { healthV1, TOPICS, webhooksV1 } from "@c402/contracts";
import { migrate } from "@c402/db";
import { standardHealth, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { subscribePaymentSettled } from "./events/payment-settled-consumer";
import { webhooksRpc } from "./rpc/webhooks-rpc";
import { webhooksInitial } from "./store/migrations/0001_webhooks";
import { webhooksProcessedEvents } from "./store/migrations/0002_processed_events";

export const WEBHOOKS_SCHEMA = "webhooks";
export { webhooksConfigSpec } from "./config";
export const webhooksMigrations = { "0001_webhooks": webhooksInitial, "0002_processed_events": webhooksProcessedEvents };

export async function createWebhooksService(deps: ServiceDeps): Promise<ServiceModule> {
  await migrate(deps.database, webhooksMigrations);
  let subscription: Subscription | undefined;
  return {
    name: "webhooks",
    register(server) {
      server.add(webhooksV1.WebhooksService, webhooksRpc(deps.database.db));
      server.add(healthV1.HealthService, standardHealth(deps, "webhooks"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.paymentSettled]);
      subscription = await subscribePaymentSettled(deps.bus, deps.database.db);
    },
    async stop() {
      await subscription?.stop();
    },
  };
}
