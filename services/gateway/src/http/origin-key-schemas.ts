import { ORIGIN_AUTH_TYPE_NAMES, ORIGIN_KEY_LIMITS } from "@c402/contracts";

/**
 * JSON Schemas of the origin-key bodies, part of request-schemas.ts's
 * `schemas`. The shape and bounds are checked here (unknown properties 422);
 * the fulfillment service applies the rest (printable ASCII, user:password
 * for basic, which header names are allowed) and answers 422 naming the field.
 */
const value = {
  type: "string",
  minLength: 1,
  maxLength: ORIGIN_KEY_LIMITS.value,
  description:
    "The credential: printable ASCII, no line breaks. bearer: the token (sent as Authorization: Bearer <value>); basic: user:password (sent base64-encoded); api_key and custom: the header's whole value. Stored sealed; never answered back.",
} as const;

export const originKeySchemas = {
  /** POST /v1/origin-keys. */
  OriginKeyCreate: {
    type: "object",
    additionalProperties: false,
    required: ["auth_type", "value"],
    properties: {
      auth_type: { type: "string", enum: ORIGIN_AUTH_TYPE_NAMES, description: "How the value is sent to the origin." },
      value,
      name: { anyOf: [{ type: "string", maxLength: ORIGIN_KEY_LIMITS.name }, { type: "null" }], description: "A label for lists." },
      header_name: {
        anyOf: [{ type: "string", minLength: 1, maxLength: ORIGIN_KEY_LIMITS.headerName }, { type: "null" }],
        description:
          "The header the value goes in: required for api_key and custom, refused for bearer and basic. Framing, connection and x402 headers are refused.",
      },
    },
  },
  /** PATCH /v1/origin-keys/{secret_id}: rotation. */
  OriginKeyRotate: {
    type: "object",
    additionalProperties: false,
    required: ["value"],
    properties: { value },
  },
} as const;
