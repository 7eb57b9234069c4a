import { runDistributedService } from "@c402/runtime";
import { createWebhooksService, webhooksConfigSpec, WEBHOOKS_SCHEMA } from "./index";

void runDistributedService({ name: "webhooks", schema: WEBHOOKS_SCHEMA, spec: webhooksConfigSpec, build: (deps) => createWebhooksService(deps) });
