import { outboundSettingsOf } from "@c402/outbound-http";
import { runDistributedService } from "@c402/runtime";
import { parseKeyring } from "@c402/sealed-secrets";
import { createWebhooksService, webhooksConfigSpec, webhooksMigrations, WEBHOOKS_SCHEMA } from "./index";

void runDistributedService({
  name: "webhooks",
  schema: WEBHOOKS_SCHEMA,
  spec: webhooksConfigSpec,
  migrations: webhooksMigrations,
  build: (deps, config) =>
    createWebhooksService(deps, {
      baseUrl: config.baseUrl,
      keyring: parseKeyring(config.secretsKeyring),
      outbound: outboundSettingsOf(config),
      timeoutMs: config.timeoutMs,
      concurrency: config.concurrency,
      signingKeyDays: config.signingKeyDays,
    }),
});
