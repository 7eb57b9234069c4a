import { DEFAULT_WEBHOOK_EVENTS } from "@c402/contracts";
import { answered } from "@c402/rpc";
import { ensureScope, type Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import { validateBody } from "../http/validate";
import { NEW_SECRET_NOTE, REKEYED_NOTE, webhookView } from "../views/webhooks";

/**
 * POST /v1/webhooks and the MCP tool create_webhook: registers a receiver (or
 * rekeys the one at that URL) and answers it with its signing secret, shown
 * this once.
 */
export async function createWebhook({ clients }: Pick<GatewayDeps, "clients">, cred: Credential, raw: unknown) {
  ensureScope(cred, "full");
  const body = validateBody("WebhookCreate", raw);
  const events = Array.isArray(body.events) ? (body.events as string[]) : [...DEFAULT_WEBHOOK_EVENTS];
  const r = await clients.webhooks.registerEndpoint({
    accountId: cred.accountId,
    actor: cred.actor,
    testMode: cred.mode === "test",
    url: body.url as string,
    events,
  });
  return {
    ...webhookView(answered(r.endpoint, "endpoint")),
    secret: r.secret,
    rekeyed: r.rekeyed,
    note: r.rekeyed ? REKEYED_NOTE : NEW_SECRET_NOTE,
  };
}
