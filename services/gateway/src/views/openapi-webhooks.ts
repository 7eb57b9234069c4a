import { WEBHOOK_EVENT_NAMES } from "@c402/contracts";
import { bool, idOf, object, ref, str, strOrNull, timestamp, timestampOrNull, type Schema } from "./openapi-schema";

/**
 * The webhook operations and shapes of the OpenAPI document (openapi.ts merges
 * them in and hands over its operation helpers, as for openapi-origin-keys.ts).
 */

type Part = Record<string, unknown> & { responses: Record<string, unknown> };

export interface WebhookOperationKit {
  operation: (op: Part, ...shared: Part[]) => unknown;
  authenticated: (minimumScope: "read_only" | "payments" | "full") => Part;
  bodyProblems: Part;
  use: (name: "NotFound" | "Conflict" | "InvalidRequest" | "BadRequest") => unknown;
  json: (description: string, schema: Schema, headers?: Record<string, unknown>) => unknown;
  header: (description: string, schema: Schema) => unknown;
  body: (name: "WebhookCreate") => unknown;
  pathParam: (name: string, schema: Schema, description: string) => unknown;
  pageQuery: unknown[];
}

/** Request bodies a client could send as they are. */
export const WEBHOOK_EXAMPLES = {
  WebhookCreate: { url: "https://shop.example.com/hooks/checkout", events: ["checkout.paid", "checkout.reported"] },
};

const count: Schema = { type: "integer", minimum: 0 };
const eventName: Schema = { enum: [...WEBHOOK_EVENT_NAMES] };

const webhookProperties: Record<string, Schema> = {
  id: idOf("wh"),
  object: { const: "webhook" },
  url: str,
  events: { type: "array", items: eventName },
  active: { ...bool, description: "false once the receiver answered 410 Gone (POST the same url to re-key and reactivate it)" },
  disabled_reason: strOrNull,
  disabled_at: timestampOrNull,
  failure_count: { ...count, description: "Failed attempts since the last success (cleared by a success or a re-key)" },
  failed_attempts: { ...count, description: "Every failed attempt" },
  failed_deliveries: { ...count, description: "Events given up on after the whole retry schedule (about three days), or failed by a 410" },
  pending_deliveries: { ...count, description: "Events still due to this receiver" },
  delivered: { ...count, description: "Events the receiver accepted (a 2xx)" },
  last_success_at: timestampOrNull,
  last_failure_at: timestampOrNull,
  created_at: timestamp,
  rekeyed_at: timestampOrNull,
};

const deliveryProperties: Record<string, Schema> = {
  id: { ...idOf("msg"), description: "The webhook-id header of every attempt: deduplicate on it" },
  object: { const: "webhook_delivery" },
  webhook_id: idOf("wh"),
  event: eventName,
  event_id: idOf("evt"),
  object_id: { ...str, description: "What the event is about: the payment id of checkout.paid, the checkout id of checkout.reported" },
  test_mode: bool,
  status: { enum: ["pending", "delivered", "failed"] },
  attempts: count,
  next_attempt_at: { ...timestampOrNull, description: "When the next attempt is due (pending only)" },
  last_status_code: { type: ["integer", "null"], description: "The receiver's last HTTP status (null when none came back)" },
  last_error: strOrNull,
  created_at: timestamp,
  delivered_at: timestampOrNull,
};

const keyProperties: Record<string, Schema> = {
  id: idOf("whk"),
  algorithm: { const: "Ed25519" },
  public_key: { ...str, description: "The raw 32-byte Ed25519 public key, base64" },
  public_key_pem: { ...str, description: "The same key as a PEM SubjectPublicKeyInfo (what crypto.verify takes)" },
  created_at: timestamp,
  retires_at: { ...timestampOrNull, description: "Set while a newer key overlaps this one: it signs beside it until then" },
};

export function webhookResponseSchemas(): Record<string, Schema> {
  return {
    Webhook: object(webhookProperties, { closed: true, description: "A receiver as listed: never its secret" }),
    NewWebhook: object(
      {
        ...webhookProperties,
        secret: { type: "string", pattern: "^whsec_[A-Za-z0-9+/]{43}=$", description: "The signing secret, shown here only" },
        rekeyed: { ...bool, description: "true when the url was already registered: this secret replaces the old one from the next attempt" },
        note: str,
      },
      { closed: true, description: "A receiver just registered or re-keyed, with its secret (shown once)" },
    ),
    DeletedWebhook: object(
      { ...webhookProperties, deleted: { const: true }, pending_removed: { ...count, description: "Deliveries still due that were dropped with it" } },
      { closed: true, description: "The receiver as it was when deleted" },
    ),
    WebhookList: object({ webhooks: { type: "array", items: ref("Webhook") }, has_more: bool, next_cursor: strOrNull }, { closed: true }),
    WebhookDelivery: object(deliveryProperties, { closed: true, description: "One event to one receiver" }),
    WebhookDeliveryList: object({ deliveries: { type: "array", items: ref("WebhookDelivery") }, has_more: bool, next_cursor: strOrNull }, { closed: true }),
    WebhookDeliveryDetail: object(
      {
        ...deliveryProperties,
        payload: { type: "object", description: "The exact JSON body every attempt sent (signatures cover its bytes as sent)" },
        attempts: {
          type: "array",
          items: object(
            {
              number: { type: "integer", minimum: 1 },
              started_at: timestamp,
              status_code: { type: ["integer", "null"] },
              latency_ms: count,
              error: strOrNull,
              outcome: { enum: ["delivered", "retry", "disabled", "failed"] },
            },
            { closed: true },
          ),
          description: "Every attempt that reported back, oldest first (a number missing is an attempt whose sender stopped mid-send)",
        },
      },
      { closed: true, description: "A delivery with its payload and every attempt" },
    ),
    VerificationKeys: object(
      {
        algorithm: { const: "Ed25519" },
        key_id: { ...idOf("whk"), description: "The newest key's id" },
        public_key: { ...str, description: "The newest key, raw 32 bytes, base64 (the spec's field)" },
        public_key_pem: str,
        keys: { type: "array", items: object(keyProperties, { closed: true }), description: "Every key that signs now, newest first (two during a rotation)" },
        signed_string: { const: "{t}.{raw_body}" },
        header: str,
        note: str,
      },
      { closed: true, description: "The keys that verify X-Service-Ed25519" },
    ),
  };
}

export function webhookPaths(k: WebhookOperationKit): Record<string, Record<string, unknown>> {
  const webhookId = k.pathParam("id", idOf("wh"), "Webhook receiver id");
  return {
    "/v1/webhooks": {
      post: k.operation(
        {
          operationId: "createWebhook",
          summary: "Register a receiver (the secret is shown once); the same url again re-keys it",
          description:
            "`events` defaults to `checkout.paid`. Registering a url the account already has re-keys that receiver: a fresh secret (`rekeyed: true`), active again, its failure counter cleared; the old secret signs nothing from the next attempt, retries included. At most 16 receivers per account (409 beyond). The url must be https (plain http only to loopback in embedded mode), without credentials or fragment, and not an address the service never calls (422 naming it). Every delivery carries `X-Service-Ed25519`, `X-Service-Signature` and the Standard Webhooks headers `webhook-id`, `webhook-timestamp` and `webhook-signature` (HMAC-SHA256 of `{id}.{t}.{raw_body}` keyed with the secret's base64 part decoded). Recorded as `webhook.created` or `webhook.rekeyed`.",
          requestBody: k.body("WebhookCreate"),
          responses: { "201": k.json("The receiver and its secret", ref("NewWebhook")), "409": k.use("Conflict") },
        },
        k.authenticated("full"),
        k.bodyProblems,
      ),
      get: k.operation(
        {
          operationId: "listWebhooks",
          summary: "The account's receivers, newest first, with their delivery counts (never a secret)",
          parameters: k.pageQuery,
          responses: { "200": k.json("A page of receivers", ref("WebhookList")), "422": k.use("InvalidRequest") },
        },
        k.authenticated("read_only"),
      ),
    },
    "/v1/webhooks/verification-key": {
      get: k.operation({
        operationId: "getWebhookVerificationKey",
        summary: "The Ed25519 keys that verify X-Service-Ed25519 (no key needed)",
        description:
          "`public_key` is the newest key. During a rotation the previous key keeps signing beside the new one (every delivery then carries two `v1=` signatures), and both are in `keys`, so a receiver that has either verifies without a gap. Fetch this again after a verification failure before treating a delivery as forged.",
        responses: {
          "200": k.json("The verification keys", ref("VerificationKeys"), {
            "Cache-Control": k.header("Cacheable briefly", { type: "string", pattern: "^public, max-age=[0-9]+$" }),
          }),
        },
      }),
    },
    "/v1/webhooks/{id}": {
      delete: k.operation(
        {
          operationId: "deleteWebhook",
          summary: "Remove a receiver and its pending deliveries",
          description: "Nothing more is sent to it, retries included. Another account's receiver answers 404. Recorded as `webhook.deleted`.",
          parameters: [webhookId],
          responses: { "200": k.json("The receiver as it was", ref("DeletedWebhook")), "404": k.use("NotFound") },
        },
        k.authenticated("full"),
      ),
    },
    "/v1/webhooks/{id}/deliveries": {
      get: k.operation(
        {
          operationId: "listWebhookDeliveries",
          summary: "A receiver's deliveries, newest first, with their status and last attempt",
          parameters: [
            webhookId,
            ...k.pageQuery,
            {
              name: "status",
              in: "query",
              required: false,
              schema: { enum: ["pending", "delivered", "failed"] },
              description: "Only deliveries in this status",
            },
          ],
          responses: { "200": k.json("A page of deliveries", ref("WebhookDeliveryList")), "404": k.use("NotFound"), "422": k.use("InvalidRequest") },
        },
        k.authenticated("read_only"),
      ),
    },
    "/v1/webhooks/{id}/deliveries/{delivery_id}": {
      get: k.operation(
        {
          operationId: "getWebhookDelivery",
          summary: "One delivery with its payload and every attempt (status, latency, error)",
          parameters: [webhookId, k.pathParam("delivery_id", idOf("msg"), "Delivery id (the webhook-id header)")],
          responses: { "200": k.json("The delivery", ref("WebhookDeliveryDetail")), "404": k.use("NotFound") },
        },
        k.authenticated("read_only"),
      ),
    },
  };
}
