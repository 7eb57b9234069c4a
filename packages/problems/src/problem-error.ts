/**
 * RFC 9457 problem documents exactly as the spec's Errors section describes them.
 * A ProblemError carries a slug; the gateway renders it, the rpc adapter carries
 * it across gRPC unchanged.
 */

export const PROBLEM_STATUS = {
  unauthenticated: 401,
  "payment-required": 402,
  forbidden: 403,
  "not-found": 404,
  conflict: 409,
  gone: 410,
  "invalid-request": 422,
  "payout-account-missing": 422,
  "bad-request": 400,
  "method-not-allowed": 405,
  "payload-too-large": 413,
  "unsupported-media-type": 415,
  "headers-too-large": 431,
  "rate-limited": 429,
  "upstream-failed": 502,
  unavailable: 503,
  internal: 500,
} as const;

export type ProblemSlug = keyof typeof PROBLEM_STATUS;

const TITLES: Record<ProblemSlug, string> = {
  unauthenticated: "Unauthenticated",
  "payment-required": "Payment required",
  forbidden: "Forbidden",
  "not-found": "Not found",
  conflict: "Conflict",
  gone: "Gone",
  "invalid-request": "Invalid request",
  "payout-account-missing": "Payout account missing",
  "bad-request": "Bad request",
  "method-not-allowed": "Method not allowed",
  "payload-too-large": "Content too large",
  "unsupported-media-type": "Unsupported media type",
  "headers-too-large": "Request header fields too large",
  "rate-limited": "Too many requests",
  "upstream-failed": "Upstream failed",
  unavailable: "Unavailable",
  internal: "Internal error",
};

export interface FieldError {
  field: string;
  reason: string;
}

export interface ProblemHelp {
  fix: string;
  /** How to obtain typed data to sign, where a payment is involved. */
  prepare?: string | null;
  retry_is_safe: boolean;
  [extra: string]: unknown;
}

export interface ProblemInit {
  message: string;
  help?: Partial<ProblemHelp>;
  errors?: FieldError[];
  /** Extra top-level members (for example `live_url`, `fault`, `reason`). */
  extensions?: Record<string, unknown>;
  /** Seconds until a retry may succeed: sent as the Retry-After header. */
  retryAfterSeconds?: number;
}

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: { message: string; help: ProblemHelp };
  help: ProblemHelp;
  errors?: FieldError[];
  [extension: string]: unknown;
}

const DEFAULT_FIX: Record<ProblemSlug, string> = {
  unauthenticated: "Send a valid key as `Authorization: Bearer <API_KEY>`.",
  "payment-required": "Request the URL without a payment to get fresh requirements, sign one of them and retry.",
  forbidden: "Use a credential that is allowed to do this.",
  "not-found": "Check the id and the path it was used under.",
  conflict: "Wait for the first request to finish, then retry.",
  gone: "This resource has expired.",
  "invalid-request": "Correct the fields listed in `errors` and retry.",
  "payout-account-missing": "Create the payout wallet's USDC token account (Solana) or trustline (Stellar) on the network named, then retry.",
  "bad-request": "Correct the request and retry.",
  "method-not-allowed": "Use one of the methods the `Allow` header lists for this path.",
  "payload-too-large": "Send a smaller request body.",
  "unsupported-media-type": "Send the body as JSON: `Content-Type: application/json` in UTF-8, uncompressed or compressed with gzip, deflate or br.",
  "headers-too-large": "Send smaller request headers (all of them together at most 16 KiB); a payment header is a few hundred bytes.",
  "rate-limited": "Slow down and retry later.",
  "upstream-failed": "Retry later; you were not charged.",
  unavailable: "Retry later.",
  internal: "Retry later; if it persists, report it.",
};

const DEFAULT_RETRY_SAFE: Record<ProblemSlug, boolean> = {
  unauthenticated: false,
  "payment-required": true,
  forbidden: false,
  "not-found": false,
  conflict: true,
  gone: false,
  "invalid-request": false,
  "payout-account-missing": false,
  "bad-request": false,
  "method-not-allowed": false,
  "payload-too-large": false,
  "unsupported-media-type": false,
  "headers-too-large": false,
  "rate-limited": true,
  "upstream-failed": true,
  unavailable: true,
  internal: true,
};

/** 5xx problems that report a failure elsewhere (a seller's server), not one of this service. */
const FAILURES_ELSEWHERE: ReadonlySet<ProblemSlug> = new Set(["upstream-failed"]);

/** Whether a problem is this service's own failure (a 5xx that is a bug or an outage of ours, logged as an error). */
export function isOwnFailure(problem: ProblemError): boolean {
  return problem.status >= 500 && !FAILURES_ELSEWHERE.has(problem.slug);
}

export class ProblemError extends Error {
  readonly slug: ProblemSlug;
  readonly help: ProblemHelp;
  readonly errors?: FieldError[];
  readonly extensions: Record<string, unknown>;
  readonly retryAfterSeconds?: number;

  constructor(slug: ProblemSlug, init: ProblemInit | string) {
    const i: ProblemInit = typeof init === "string" ? { message: init } : init;
    super(i.message);
    this.name = "ProblemError";
    this.slug = slug;
    this.help = {
      fix: i.help?.fix ?? DEFAULT_FIX[slug],
      prepare: i.help?.prepare ?? null,
      retry_is_safe: i.help?.retry_is_safe ?? DEFAULT_RETRY_SAFE[slug],
      ...stripKnown(i.help),
    };
    if (i.errors) this.errors = i.errors;
    this.extensions = i.extensions ?? {};
    if (i.retryAfterSeconds !== undefined) this.retryAfterSeconds = i.retryAfterSeconds;
  }

  get status(): number {
    return PROBLEM_STATUS[this.slug];
  }
}

/**
 * A dependency this service cannot work without (its database) could not be
 * reached or went away mid-statement: an outage, not a fault of the request,
 * so it is answered 503 `unavailable` (problemOf). Thrown by
 * the code that talks to the dependency; its cause keeps the original error
 * for the log.
 */
export class DependencyUnavailableError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "DependencyUnavailableError";
  }
}

/**
 * The one answer for any failure: a problem as it is, a dependency's outage as
 * 503 `unavailable` (retry is safe: nothing was decided), anything else as
 * 500 `internal`.
 */
export function problemOf(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  if (err instanceof DependencyUnavailableError) {
    return new ProblemError("unavailable", "A component this service depends on is unavailable for the moment; nothing was decided.");
  }
  return new ProblemError("internal", "The service failed to handle this request.");
}

function stripKnown(help?: Partial<ProblemHelp>): Record<string, unknown> {
  if (!help) return {};
  const { fix: _f, prepare: _p, retry_is_safe: _r, ...rest } = help;
  return rest;
}

export function isProblemSlug(value: string): value is ProblemSlug {
  return Object.prototype.hasOwnProperty.call(PROBLEM_STATUS, value);
}

/** Renders a problem as the RFC 9457 document the spec defines. */
export function toProblemDocument(problem: ProblemError, siteUrl: string): ProblemDocument {
  const doc: ProblemDocument = {
    ...problem.extensions,
    type: `${siteUrl.replace(/\/+$/, "")}/problems/${problem.slug}`,
    title: TITLES[problem.slug],
    status: problem.status,
    detail: { message: problem.message, help: problem.help },
    help: problem.help,
  };
  if (problem.errors) doc.errors = problem.errors;
  return doc;
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** Shorthand for a 422 with one or more field errors. */
export function invalid(errors: FieldError[], message = "The request is not valid."): ProblemError {
  return new ProblemError("invalid-request", { message, errors });
}

/**
 * A presented payment that is refused (402): the x402 reason code travels as
 * the `reason` extension, and the buyer is told how to get fresh requirements.
 */
export function paymentRefused(reason: string, message: string, prepareHint?: string): ProblemError {
  return new ProblemError("payment-required", {
    message,
    help: {
      fix: "Request the URL without a payment for fresh requirements, sign one of them unchanged and retry.",
      // A rail's own hint (how its buyers sign); without one the face answering names its /prepare URL.
      ...(prepareHint !== undefined ? { prepare: prepareHint } : {}),
      retry_is_safe: true,
    },
    extensions: { reason },
  });
}
