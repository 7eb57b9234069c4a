import { ORIGIN_AUTH_TYPE_NAMES, ORIGIN_KEY_LIMITS } from "@c402/contracts";

/**
 * JSON Schemas of the origin-key bodies, part of request-schemas.ts's
 * `schemas`. The shape and bounds are checked here (unknown properties 422);
 * the fulfillment service applies the rest (printable ASCII, user:password
 * for basic, which header names are allowed) and answers 422 naming the field.
 */
/** An origin credential's value: printable ASCII is checked by the service. */
const valueBounds = { type: "string", minLength: 1, maxLength: ORIGIN_KEY_LIMITS.value } as const;
const value = {
  ...valueBounds,
  description:
    "The credential: printable ASCII, no line breaks. bearer: the token (sent as Authorization: Bearer <value>); basic: user:password (sent base64-encoded); api_key and custom: the header's whole value. Stored sealed; never answered back.",
} as const;

/** The origin-auth fields a request carries beside an origin URL (POST /v1/mcp/tools; relay and mcp creates). */
export const originAuthProperties = {
  origin_auth_type: {
    anyOf: [{ type: "string", enum: ORIGIN_AUTH_TYPE_NAMES }, { type: "null" }],
    description: "How a one-off credential is sent (with origin_auth_value).",
  },
  origin_auth_value: { anyOf: [valueBounds, { type: "null" }], description: "A one-off credential (with origin_auth_type); as an origin key's value." },
  origin_auth_header: {
    anyOf: [{ type: "string", minLength: 1, maxLength: ORIGIN_KEY_LIMITS.headerName }, { type: "null" }],
    description: "The header of a one-off api_key or custom credential.",
  },
  origin_auth_secret_id: {
    anyOf: [{ type: "string", minLength: 1, maxLength: 64 }, { type: "null" }],
    description: "A stored origin key of the account, instead of a one-off credential.",
  },
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
  /** POST /v1/mcp/tools: a seller's MCP server, and how to authenticate to it. */
  McpToolsRequest: {
    type: "object",
    additionalProperties: false,
    required: ["origin_url"],
    properties: {
      origin_url: {
        type: "string",
        minLength: 1,
        maxLength: 2048,
        description: "The server's streamable HTTP endpoint (absolute http or https URL, no credentials in it).",
      },
      ...originAuthProperties,
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
