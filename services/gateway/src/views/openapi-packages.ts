import { anyJson, bool, idOf, object, ref, str, strOrNull, timestampOrNull, timestamp, url, type Schema } from "./openapi-schema";

/**
 * Packages of calls in the OpenAPI document: what a package purchase adds
 * to the paid answer, a package call's answer, and the usage record
 * (openapi.ts merges these in).
 */

const count: Schema = { type: "integer", minimum: 0 };

export function packageResponseSchemas(): Record<string, Schema> {
  return {
    PackageState: object(
      {
        status: { enum: ["live", "exhausted", "expired"] },
        calls_included: { type: "integer", minimum: 1 },
        calls_used: count,
        calls_remaining: count,
        expires_at: timestampOrNull,
        usage_url: url,
        how: str,
        note: { ...str, description: "On a redelivery: the key was shown once and cannot be shown again" },
      },
      { optional: ["note"], description: "A package of calls (never its key)" },
    ),
    PackageCall: object(
      {
        fulfillment: object(
          {
            mode: { enum: ["relay", "mcp"] },
            payload: { ...anyJson, description: "The origin's body: JSON parsed, text, or base64 with encoding" },
            origin_status: { type: "integer" },
            content_type: strOrNull,
            encoding: { const: "base64" },
          },
          { optional: ["encoding"] },
        ),
        calls_remaining: count,
        call: object({ seq: { type: "integer", minimum: 1 }, counted: { const: true } }),
        package: ref("PackageState"),
        receipt_url: { ...url, description: "The package purchase's receipt" },
        test_mode: bool,
        fault: { const: "buyer", description: "The origin refused the buyer's request (400, 404, 422); counted, the answer is the product" },
        help: object({ fix: str, retry_is_safe: bool, report: ref("ReportHelp") }),
      },
      { optional: ["fault", "help"], description: "A call spent from a package: the origin's answer and what is left" },
    ),
    PackageUsage: object(
      {
        object: { const: "package_usage" },
        checkout_id: idOf("chk"),
        test_mode: bool,
        status: { enum: ["live", "exhausted", "expired"] },
        calls_included: { type: "integer", minimum: 1 },
        calls_used: count,
        calls_remaining: count,
        expires_at: timestampOrNull,
        receipt: object({ id: idOf("pay"), url }),
        calls: {
          type: "array",
          description: "Newest first, one page (limit, before)",
          items: object({
            seq: { type: "integer", minimum: 1 },
            at: timestamp,
            status: { type: ["integer", "null"], description: "The origin's HTTP status (null: it did not answer, or the call is under way)" },
            pending: bool,
            counted: bool,
            fault: { enum: ["seller", "buyer", "platform", null] },
            latency_ms: count,
            bytes: count,
          }),
        },
        has_more: bool,
        next: { ...strOrNull, description: "The next page's URL (null on the last)" },
        burn: object({
          calls_per_day: { type: ["number", "null"] },
          projected_days_remaining: { type: ["number", "null"] },
          runs_out_first: { enum: ["calls", "expiry", null] },
          basis: { enum: ["trailing_7_days", "since_purchase", "insufficient_usage"] },
        }),
      },
      { description: "A package's usage record (free; spends nothing)" },
    ),
  };
}

/** The fields a package purchase adds to the paid answer. */
export const packagePurchaseProperties: Record<string, Schema> = {
  package_key: {
    type: ["string", "null"],
    pattern: "^pk_(test|live)_[0-9A-Za-z]{32}$",
    description: "A package purchase: the key that spends the package's calls, shown once (null on a redelivery)",
  },
  deliveries_remaining: { ...count, description: "A package purchase: calls left after this one" },
  package: ref("PackageState"),
};
export const PACKAGE_PURCHASE_FIELDS = Object.keys(packagePurchaseProperties);

/** The Authorization header of a package call or usage read. */
export const packageKeyHeader = {
  name: "Authorization",
  in: "header",
  required: false,
  schema: { type: "string", pattern: "^Bearer pk_" },
  description:
    "Bearer <package_key>: spends one call of a package bought on this checkout; any Bearer pk_… that is not a key of this checkout, whatever its shape, is 401 (any other Authorization is ignored); a payment header wins over it",
};

/** The 402 of an exhausted package: a problem with calls_used and calls_included in its help block. */
export const packageExhaustedExtra: Schema = {
  properties: {
    help: {
      type: "object",
      properties: { calls_used: { type: "integer" }, calls_included: { type: "integer" } },
      required: ["calls_used", "calls_included"],
    },
  },
  required: ["help"],
};
