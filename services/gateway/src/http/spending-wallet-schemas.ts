/**
 * JSON Schemas of the spending wallets' bodies (spec, Endpoints: Spending
 * wallets; ADR 21), part of request-schemas.ts's `schemas`: the validators
 * and the OpenAPI document both read them there. The bounds are the
 * contract's (proto/spending_wallets/v1), so a body the gateway accepts is
 * one the service accepts.
 */

export const PAY_URL_MAX = 2048;
export const PAY_PARAMS_MAX = 50;
export const PAY_PARAM_NAME_MAX = 100;
export const PAY_PARAM_VALUE_MAX = 2000;
export const AGENT_KEY_NAME_MAX = 100;

/** A USD amount: a decimal with at most 6 places (USDC's), at most nine digits before the point. */
export const USD_DECIMAL = "^(0|[1-9][0-9]{0,8})(\\.[0-9]{1,6})?$";

const usd = (description: string) => ({ type: "string", pattern: USD_DECIMAL, maxLength: 16, description }) as const;

export const spendingWalletSchemas = {
  /** POST /v1/spending-wallets/{chain}/pay: what the agent pays. */
  SpendingPay: {
    type: "object",
    additionalProperties: false,
    required: ["url"],
    description: "An x402 URL to pay from the chain's spending wallet, under the account's limits.",
    properties: {
      url: {
        type: "string",
        minLength: 1,
        maxLength: PAY_URL_MAX,
        pattern: "^https?://[^\\s]+$",
        description: "The x402 URL (http or https) to fetch and pay.",
      },
      max_usd: usd('Lowers the ceiling of this payment (never raises it above the limits): a decimal string, e.g. "0.25".'),
      params: {
        type: "object",
        maxProperties: PAY_PARAMS_MAX,
        propertyNames: { minLength: 1, maxLength: PAY_PARAM_NAME_MAX },
        additionalProperties: { type: "string", maxLength: PAY_PARAM_VALUE_MAX },
        description: `Added to the URL's query string (at most ${PAY_PARAMS_MAX}).`,
      },
    },
  },
  /** PUT /v1/spending-wallets/{chain}/limits: both limits, replaced together. */
  SpendingLimitsPut: {
    type: "object",
    additionalProperties: false,
    required: ["per_payment_usd", "per_day_usd"],
    properties: {
      per_payment_usd: usd("The most one payment may cost."),
      per_day_usd: usd("The most the wallet may spend in a UTC day."),
    },
  },
  /** POST /v1/spending-wallets/keys: the agent key's name; the body is optional. */
  SpendingAgentKeyCreate: {
    type: "object",
    additionalProperties: false,
    properties: {
      name: { type: "string", minLength: 1, maxLength: AGENT_KEY_NAME_MAX, description: 'How the key list names it (default "agent").' },
    },
  },
} as const;
