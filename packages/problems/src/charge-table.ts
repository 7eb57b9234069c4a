import { ProblemError } from "./problem-error";

/**
 * The spec's charge table (Errors, items 4 and 5) for a relay or mcp call the
 * buyer was not charged for, worded for what the buyer can do next: a
 * purchase presents the same payment again, a package call was given back.
 */

/** An uncharged call: why, and what the origin answered (0: it did not). */
export interface UnchargedCall {
  /** origin_error, timeout, unreachable, …; `abandoned` and `platform_error` are ours. */
  reason: string;
  status: number;
}

/** 502 upstream-failed: the seller's origin failed (fault seller), or our side cut the call off (fault platform). */
export function notChargedProblem(call: UnchargedCall, remedy: { retry: string; fix: string }): ProblemError {
  const ours = call.reason === "abandoned" || call.reason === "platform_error";
  return new ProblemError("upstream-failed", {
    message: ours
      ? `The call was interrupted on our side before the seller's origin answered. You were not charged; ${remedy.retry}`
      : `The seller's origin failed (${call.reason.replace(/_/g, " ")}${call.status ? `, HTTP ${call.status}` : ""}). You were not charged; ${remedy.retry}`,
    help: { fix: remedy.fix, retry_is_safe: true },
    extensions: { fault: ours ? "platform" : "seller", reason: call.reason, origin_status: call.status || null, charged: false },
  });
}

/** 429: the checkout's rehearsal deliveries for today are used up; the origin was not called. */
export function rehearsalCapProblem(resetSeconds: number): ProblemError {
  return new ProblemError("rate-limited", {
    message: "This checkout's rehearsal deliveries for today are used up (test_delivery_daily_cap). Nothing was charged.",
    help: { fix: "Buy on the live face, or rehearse again tomorrow (UTC).", retry_is_safe: true },
    extensions: { fault: "buyer", reason: "test_delivery_daily_cap", charged: false },
    retryAfterSeconds: resetSeconds,
  });
}

/**
 * 401: the package key is not one of this checkout's. An unknown key, a
 * malformed one (whatever its shape) and another checkout's answer alike, so
 * a key's existence elsewhere never shows (spec, Errors: unauthenticated).
 */
export function packageKeyRefusedProblem(): ProblemError {
  return new ProblemError("unauthenticated", {
    message: "This package key is not one of this checkout's.",
    help: { fix: "Send the package_key this checkout's purchase answered, as Authorization: Bearer <PACKAGE_KEY>.", retry_is_safe: false },
  });
}
