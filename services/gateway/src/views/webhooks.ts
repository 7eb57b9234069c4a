import type { webhooksV1 } from "@c402/contracts";
import { isoOrNull } from "./values";

/** The public JSON shapes of webhook receivers, their deliveries and the verification keys. */

export function webhookView(e: webhooksV1.WebhookEndpoint) {
  return {
    id: e.id,
    object: "webhook" as const,
    url: e.url,
    events: e.events,
    active: e.active,
    disabled_reason: e.disabledReason ?? null,
    disabled_at: isoOrNull(e.disabledAt),
    failure_count: e.consecutiveFailures,
    failed_attempts: Number(e.failedAttempts),
    failed_deliveries: Number(e.failedDeliveries),
    pending_deliveries: Number(e.pendingDeliveries),
    delivered: Number(e.delivered),
    last_success_at: isoOrNull(e.lastSuccessAt),
    last_failure_at: isoOrNull(e.lastFailureAt),
    created_at: isoOrNull(e.createdAt),
    rekeyed_at: isoOrNull(e.rekeyedAt),
  };
}

export const NEW_SECRET_NOTE =
  "Store the secret now: it is shown once. Each delivery carries X-Service-Signature (HMAC-SHA256 of `{t}.{raw_body}` keyed with this secret), X-Service-Ed25519 (verify with GET /v1/webhooks/verification-key) and the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature). Deduplicate on webhook-id.";
export const REKEYED_NOTE =
  "Re-keyed: the old secret is dead from the next delivery attempt, including retries of earlier events. The receiver is active again and its failure counter is cleared. Store the new secret now: it is shown once.";

export function deliveryView(d: webhooksV1.WebhookDelivery) {
  return {
    id: d.id,
    object: "webhook_delivery" as const,
    webhook_id: d.endpointId,
    event: d.event,
    event_id: d.eventId,
    object_id: d.aggregateId,
    test_mode: d.testMode,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: isoOrNull(d.nextAttemptAt),
    last_status_code: d.lastStatusCode ?? null,
    last_error: d.lastError ?? null,
    created_at: isoOrNull(d.createdAt),
    delivered_at: isoOrNull(d.deliveredAt),
  };
}

export function attemptView(a: webhooksV1.DeliveryAttempt) {
  return {
    number: a.number,
    started_at: isoOrNull(a.startedAt),
    status_code: a.statusCode ?? null,
    latency_ms: a.latencyMs,
    error: a.error ?? null,
    outcome: a.outcome,
  };
}

const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

function keyView(k: webhooksV1.SigningKey) {
  const raw = Buffer.from(k.publicKey);
  return {
    id: k.id,
    algorithm: "Ed25519" as const,
    public_key: raw.toString("base64"),
    public_key_pem: `-----BEGIN PUBLIC KEY-----\n${Buffer.concat([SPKI_ED25519_PREFIX, raw]).toString("base64")}\n-----END PUBLIC KEY-----\n`,
    created_at: isoOrNull(k.createdAt),
    retires_at: isoOrNull(k.retiresAt),
  };
}

/** The newest key as `public_key` (the spec's field), and every key that signs now in `keys` (two during a rotation). */
export function verificationKeyView(keys: readonly webhooksV1.SigningKey[]) {
  const shown = keys.map(keyView);
  const newest = shown[0];
  return {
    algorithm: "Ed25519" as const,
    key_id: newest?.id ?? null,
    public_key: newest?.public_key ?? null,
    public_key_pem: newest?.public_key_pem ?? null,
    keys: shown,
    signed_string: "{t}.{raw_body}",
    header: "X-Service-Ed25519: t=<unix seconds>,v1=<base64 signature>[,v1=<base64 signature>]",
    note: "During a key rotation every delivery carries one v1 signature per key in `keys`; accept the delivery when any verifies with a key you trust. After a verification failure, fetch this document again before treating a delivery as forged.",
  };
}
