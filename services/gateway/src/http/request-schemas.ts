import type { FromSchema } from "./schema-type";

/**
 * JSON Schemas of the request bodies. The gateway validates every body with
 * them (shape, types, unknown fields) and the OpenAPI document publishes the
 * same objects, so the two cannot drift; each body's type is derived from its
 * schema (BodyOf), so it cannot drift from them either. Business rules
 * (prices, addresses, limits that need the account) live in the owning service.
 */
const nullable = <const S>(schema: S) => ({ anyOf: [schema, { type: "null" }] }) as const;
const goods = { anyOf: [{ type: "object" }, { type: "array" }, { type: "string" }, { type: "null" }] } as const;
const text = nullable({ type: "string" });

export const CHECKOUT_NOT_YET_FIELDS = [
  "origin_url",
  "origin_method",
  "origin_auth_type",
  "origin_auth_value",
  "origin_auth_header",
  "origin_auth_secret_id",
  "mcp_tool",
  "max_deliveries",
  "package_ttl_days",
  "schedule_interval_days",
  "schedule_periods",
  "test_delivery_daily_cap",
  "content",
  "wallet_button",
  "parties",
  "platform_fee_bps",
  "inherit_account_payouts",
  "escrow_offer",
] as const;

export const schemas = {
  CheckoutCreate: {
    type: "object",
    additionalProperties: false,
    required: ["title", "price_usd"],
    properties: {
      title: { type: "string", description: "What the buyer gets." },
      price_usd: { type: "string", description: 'Seller price as a decimal string, e.g. "0.10".' },
      pay_to: { type: "string", description: "Payout wallet; defaults to the account's standing payout wallet. Immutable." },
      description: text,
      fulfillment: { type: "string", enum: ["inline", "relay", "mcp", "webhook"] },
      payload: { ...goods, description: "The goods, delivered inline when payment settles." },
      reusable: { type: "boolean", description: "false (default): single-shot; true: a payment link." },
      test_mode: nullable({ type: "boolean" }),
      // The catalog's own bound (366 days) too: a larger number cannot even cross gRPC as an int64.
      expires_in_minutes: nullable({ type: "integer", minimum: 1, maximum: 527_040 }),
      input_schema: goods,
      output_schema: goods,
      example_input: goods,
      example_output: goods,
      freshness: text,
      coverage: text,
      source: text,
      constraints: text,
    },
  },
  ApiKeyCreate: {
    type: "object",
    additionalProperties: false,
    properties: {
      name: text,
      scope: { type: "string", enum: ["read_only", "payments", "full"] },
      mode: { type: "string", enum: ["test", "live"] },
    },
  },
  WalletChallenge: {
    type: "object",
    additionalProperties: false,
    required: ["address", "network"],
    properties: { address: { type: "string", minLength: 4, maxLength: 128 }, network: { type: "string", minLength: 3, maxLength: 64 } },
  },
  WalletVerify: {
    type: "object",
    additionalProperties: false,
    required: ["message", "signature"],
    properties: { message: { type: "string", minLength: 1, maxLength: 4000 }, signature: { type: "string", minLength: 1, maxLength: 2048 } },
  },
  FacilitatorRequest: {
    type: "object",
    additionalProperties: false,
    required: ["network", "requirement", "payload"],
    properties: {
      network: {
        type: "string",
        pattern: "^(eip155:(8453|84532)|stellar:(pubnet|testnet)|solana:[1-9A-HJ-NP-Za-km-z]{32,44})$",
        description: "One of the service's CAIP-2 network ids",
      },
      requirement: { type: "object", description: "The 402 requirement the service issued" },
      payload: { type: "object", description: "The buyer's signed payment payload" },
    },
  },
  /** POST /c/{id}/pay: the payment travels in its header, as on GET; `schedule` (series) is withheld until series exist. */
  FacePay: { type: "object", additionalProperties: false, properties: {} },
  PaymentPrepare: {
    type: "object",
    additionalProperties: false,
    required: ["payer"],
    properties: {
      payer: { type: "string", maxLength: 128 },
      network: nullable({ type: "string", maxLength: 64 }),
      params: nullable({ type: "object", additionalProperties: { type: "string" } }),
    },
  },
} as const;

export type SchemaName = keyof typeof schemas;

/** The type of a body its schema accepts. */
export type BodyOf<N extends SchemaName> = FromSchema<(typeof schemas)[N]>;
