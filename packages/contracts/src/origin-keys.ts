/**
 * The bounds of an origin key's fields, in one place: the gateway's request
 * schemas (and so the OpenAPI document) and the fulfillment service's rules
 * both read them.
 */
export const ORIGIN_KEY_LIMITS = {
  /** Characters of the value (printable ASCII: it goes in a header). */
  value: 4096,
  name: 120,
  /** Characters of header_name (an HTTP field name). */
  headerName: 100,
} as const;

/** How the value is sent: Authorization Bearer, Authorization Basic (user:password, base64-encoded), or a named header (api_key, custom). */
export const ORIGIN_AUTH_TYPE_NAMES = ["bearer", "basic", "api_key", "custom"] as const;
