import { WEBHOOK_EVENT_NAMES } from "@c402/contracts";

/** JSON Schemas of the webhook bodies, part of request-schemas.ts's `schemas` (the service checks the URL itself). */
export const webhookSchemas = {
  /** POST /v1/webhooks. */
  WebhookCreate: {
    type: "object",
    additionalProperties: false,
    required: ["url"],
    properties: {
      url: {
        type: "string",
        minLength: 1,
        maxLength: 2048,
        description:
          "Where deliveries are POSTed: an absolute https URL (plain http only to loopback in embedded mode), without credentials or fragment. The same url again re-keys the receiver.",
      },
      events: {
        anyOf: [{ type: "array", minItems: 1, maxItems: WEBHOOK_EVENT_NAMES.length, items: { type: "string", enum: WEBHOOK_EVENT_NAMES } }, { type: "null" }],
        description: "The events to receive (null or absent: checkout.paid). schedule.* names are accepted and fire once series exist.",
      },
    },
  },
} as const;
