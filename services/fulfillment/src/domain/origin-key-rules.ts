import { CROSS_ORIGIN_SAFE_HEADERS } from "@c402/outbound-http";
import { ORIGIN_KEY_LIMITS, type OriginAuthTypeName } from "@c402/contracts";
import { invalid, type FieldError } from "@c402/problems";

/**
 * What an origin key may hold (docs/decisions.md, "Origin keys"). The value
 * ends up in a request header to the seller's origin, so it is printable
 * ASCII only: a CR or LF would let a seller's value inject headers, and
 * fetch refuses header values outside Latin-1.
 */
const { value: ORIGIN_KEY_VALUE_MAX, name: ORIGIN_KEY_NAME_MAX, headerName: HEADER_NAME_MAX } = ORIGIN_KEY_LIMITS;

const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;
/** An HTTP field name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers a key may not set: framing and connection headers (they would break
 * or smuggle the request), the x402 headers (the relay never forges a
 * payment toward an origin), and the headers a request keeps across a
 * cross-origin redirect (a credential there would follow it to another host).
 */
const RESERVED_HEADERS = new Set([
  ...CROSS_ORIGIN_SAFE_HEADERS,
  "host",
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "proxy-authorization",
  "proxy-connection",
  "x-payment",
  "x-payment-response",
  "payment-signature",
  "payment-required",
  "payment-response",
]);

export const needsHeaderName = (type: OriginAuthTypeName): boolean => type === "api_key" || type === "custom";

export function valueErrors(type: OriginAuthTypeName, value: string): FieldError[] {
  if (value.length === 0) return [{ field: "value", reason: "is required" }];
  if (value.length > ORIGIN_KEY_VALUE_MAX) return [{ field: "value", reason: `must be at most ${ORIGIN_KEY_VALUE_MAX} characters` }];
  if (!PRINTABLE_ASCII.test(value)) return [{ field: "value", reason: "must be printable ASCII (no control characters or line breaks)" }];
  if (value.trim() !== value) return [{ field: "value", reason: "must not start or end with spaces" }];
  if (type === "basic" && !value.includes(":")) return [{ field: "value", reason: "for basic is user:password (it is sent base64-encoded)" }];
  return [];
}

export function headerNameErrors(type: OriginAuthTypeName, headerName: string | undefined): FieldError[] {
  if (!needsHeaderName(type)) {
    return headerName === undefined ? [] : [{ field: "header_name", reason: `is only for api_key and custom (${type} uses Authorization)` }];
  }
  if (headerName === undefined || headerName === "") return [{ field: "header_name", reason: `is required for ${type}` }];
  if (headerName.length > HEADER_NAME_MAX || !TOKEN.test(headerName)) {
    return [{ field: "header_name", reason: `must be an HTTP header name (letters, digits and !#$%&'*+.^_\`|~-, at most ${HEADER_NAME_MAX})` }];
  }
  if (RESERVED_HEADERS.has(headerName.toLowerCase())) return [{ field: "header_name", reason: `cannot be ${headerName.toLowerCase()}` }];
  return [];
}

export function nameErrors(name: string | undefined): FieldError[] {
  if (name !== undefined && name.length > ORIGIN_KEY_NAME_MAX) return [{ field: "name", reason: `must be at most ${ORIGIN_KEY_NAME_MAX} characters` }];
  return [];
}

export function assertValid(errors: FieldError[]): void {
  if (errors.length > 0) throw invalid(errors);
}
