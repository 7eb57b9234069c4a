/**
 * The building blocks of the OpenAPI document's schemas (openapi.ts and the
 * files it merges in, such as openapi-reports.ts, build with the same ones).
 */

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const orNull = (schema: Schema): Schema => ({ anyOf: [schema, { type: "null" }] });
export const str: Schema = { type: "string" };
export const strOrNull: Schema = { type: ["string", "null"] };
export const bool: Schema = { type: "boolean" };
export const timestamp: Schema = { type: "string", format: "date-time" };
export const timestampOrNull: Schema = { type: ["string", "null"], format: "date-time" };
export const url: Schema = { type: "string", format: "uri" };
export const idOf = (prefix: string): Schema => ({ type: "string", pattern: `^${prefix}_[0-9A-Za-z]{24}$` });
/** Anything a checkout face sells: an ordinary checkout (chk_…, faces under /c/), a gated article (cnt_…, /x/) or an escrow checkout (esc_…, /e/). */
export const checkoutOrArticleId: Schema = {
  ...idOf("(chk|cnt|esc)"),
  description: "chk_… for a checkout, cnt_… for a gated article, esc_… for an escrow checkout",
};
/** A decimal USD amount as the service prints it ("0.100000"). */
export const usd: Schema = { type: "string", pattern: "^[0-9]+(\\.[0-9]+)?$" };
/** A decimal USD amount with exactly six decimals (a whole number of USDC atomic units). */
export const usd6: Schema = { type: "string", pattern: "^[0-9]+\\.[0-9]{6}$" };
/** An amount in the token's smallest unit, as a decimal string. */
export const atomic: Schema = { type: "string", pattern: "^[0-9]+$" };
export const caip2: Schema = { type: "string", pattern: "^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$", description: "CAIP-2 network id" };
/** Any JSON value (goods and offer-card JSON are the seller's own). */
export const anyJson: Schema = {};

/** An object whose listed properties are all required; further properties are allowed unless `closed`. */
export function object(properties: Record<string, Schema>, opts: { closed?: boolean; optional?: string[]; description?: string } = {}): Schema {
  const optional = new Set(opts.optional ?? []);
  return {
    type: "object",
    ...(opts.description ? { description: opts.description } : {}),
    required: Object.keys(properties).filter((k) => !optional.has(k)),
    properties,
    ...(opts.closed ? { additionalProperties: false } : {}),
  };
}
