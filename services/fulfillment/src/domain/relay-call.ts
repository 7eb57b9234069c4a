import { guardedRequest, OutboundRefused, type GuardedFetch } from "@c402/outbound-http";
import type { FieldError } from "@c402/problems";
import { credentialHeaders } from "./origin-auth";
import type { OriginCredential } from "./origin-keys";

/**
 * One call of a relay checkout's origin on a buyer's behalf, and what it
 * means for the buyer's payment (the spec's charge table, docs/decisions.md
 * "Relay charge table"): the goods (2xx) and the buyer's own request errors
 * (400, 404, 422) are charged; everything else is the seller's failure and is
 * not. The caller (the purchase saga) settles only a charged outcome.
 */

export const RELAY_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type RelayMethod = (typeof RELAY_METHODS)[number];
const BODY_METHODS: ReadonlySet<RelayMethod> = new Set(["POST", "PUT", "PATCH"]);

/** The buyer's reserved parameter that is the request body of a body-taking method. */
export const BODY_PARAM = "body";
export const BODY_MAX_CHARS = 8000;
export const PARAMS_MAX = 50;
const PARAM_NAME_MAX = 100;
const PARAM_VALUE_MAX = 2000;
/** Origin statuses that are the buyer's own request error: the origin did the work, the answer is the product. */
const CHARGED_ERRORS: ReadonlySet<number> = new Set([400, 404, 422]);

export interface RelayTarget {
  originUrl: string;
  method: RelayMethod;
  credential?: OriginCredential;
}

export interface Delivery {
  status: number;
  contentType: string | null;
  body: Buffer;
  latencyMs: number;
  bytes: number;
}

export type RelayOutcome =
  | ({ kind: "delivered" | "buyer_error"; charged: true } & Delivery)
  | {
      kind: "origin_failed";
      charged: false;
      fault: "seller";
      /** Why, for the buyer's 502 and the seller's records. */
      reason:
        | "origin_error"
        | "origin_refused_credential"
        | "origin_rate_limited"
        | "unexpected_status"
        | "timeout"
        | "unreachable"
        | "too_large"
        | "blocked"
        /** mcp: the tool reported an error (isError), or the server answered something that is not MCP. */
        | "tool_error"
        | "protocol_error";
      status: number | null;
      latencyMs: number;
    };

/**
 * The buyer's parameters as the request to the origin: every one a query
 * parameter, except `body`, the JSON body of a POST, PUT or PATCH. A
 * parameter the seller's URL already fixes cannot be overridden. Errors name
 * the parameter (the buyer's 422, before any payment is taken).
 */
export function relayRequestErrors(target: RelayTarget, params: Record<string, string>): FieldError[] {
  const names = Object.keys(params);
  if (names.length > PARAMS_MAX) return [{ field: "params", reason: `at most ${PARAMS_MAX} parameters` }];
  const fixed = new URL(target.originUrl).searchParams;
  const errors: FieldError[] = [];
  for (const name of names) {
    const value = params[name] as string;
    if (name.length === 0 || name.length > PARAM_NAME_MAX)
      errors.push({ field: `params.${name.slice(0, PARAM_NAME_MAX)}`, reason: `names are 1 to ${PARAM_NAME_MAX} characters` });
    else if (name === BODY_PARAM) {
      if (!BODY_METHODS.has(target.method))
        errors.push({ field: `params.${BODY_PARAM}`, reason: `is the request body of POST, PUT and PATCH origins; this one takes ${target.method}` });
      else if (value.length > BODY_MAX_CHARS) errors.push({ field: `params.${BODY_PARAM}`, reason: `must be at most ${BODY_MAX_CHARS} characters` });
      else if (!isJson(value)) errors.push({ field: `params.${BODY_PARAM}`, reason: "must be a JSON text" });
    } else if (value.length > PARAM_VALUE_MAX) errors.push({ field: `params.${name}`, reason: `must be at most ${PARAM_VALUE_MAX} characters` });
    else if (fixed.has(name)) errors.push({ field: `params.${name}`, reason: "is fixed by the seller's origin URL" });
  }
  return errors;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export type FailureReason = Extract<RelayOutcome, { kind: "origin_failed" }>["reason"];

/** The seller's failure, not charged, timed from `startedMs` (performance.now()). */
export function failureSince(startedMs: number): (reason: FailureReason, status?: number | null) => RelayOutcome {
  return (reason, status = null) => ({
    kind: "origin_failed",
    charged: false,
    fault: "seller",
    reason,
    status,
    latencyMs: Math.round(performance.now() - startedMs),
  });
}

/** Why the outbound guard's refusal means the origin failed. */
export function refusalReason(refusal: OutboundRefused): FailureReason {
  if (refusal.reason === "timeout") return "timeout";
  if (refusal.reason === "too-large") return "too_large";
  if (refusal.reason === "blocked-address" || refusal.reason === "bad-url" || refusal.reason === "redirect-downgrade") return "blocked";
  return "unreachable";
}

/** Calls the origin once (within `deadlineMs`) and classifies the answer. Check the parameters with relayRequestErrors first. */
export async function callOrigin(fetch: GuardedFetch, target: RelayTarget, params: Record<string, string>, deadlineMs: number): Promise<RelayOutcome> {
  const url = new URL(target.originUrl);
  for (const [name, value] of Object.entries(params)) if (name !== BODY_PARAM) url.searchParams.append(name, value);
  const body = BODY_METHODS.has(target.method) ? params[BODY_PARAM] : undefined;
  const headers: Record<string, string> = {
    accept: "application/json, */*;q=0.8",
    ...(body !== undefined ? { "content-type": "application/json" } : {}),
    ...(target.credential ? credentialHeaders(target.credential) : {}),
  };
  const failed = failureSince(performance.now());
  let answer;
  try {
    answer = await guardedRequest(fetch, url, {
      method: target.method,
      headers,
      ...(body !== undefined ? { body } : {}),
      signal: AbortSignal.timeout(deadlineMs),
    });
  } catch (err) {
    if (err instanceof OutboundRefused) return failed(refusalReason(err));
    if (err instanceof DOMException && (err.name === "TimeoutError" || err.name === "AbortError")) return failed("timeout");
    throw err;
  }
  const status = answer.status;
  const delivery: Delivery = {
    status,
    contentType: answer.headers.get("content-type"),
    body: answer.body,
    latencyMs: Math.round(answer.elapsedMs),
    bytes: answer.body.length,
  };
  if (status >= 200 && status < 300) return { kind: "delivered", charged: true, ...delivery };
  if (CHARGED_ERRORS.has(status)) return { kind: "buyer_error", charged: true, ...delivery };
  if (status === 401 || status === 403) return failed("origin_refused_credential", status);
  if (status === 429) return failed("origin_rate_limited", status);
  if (status >= 500) return failed("origin_error", status);
  return failed("unexpected_status", status);
}
