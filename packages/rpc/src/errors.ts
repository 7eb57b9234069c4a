import { Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { isProblemSlug, ProblemError, problemOf, type ProblemSlug } from "@c402/problems";

/**
 * The one mapping between problem types and gRPC status codes. The problem
 * itself (slug, message, help, field errors) travels in trailing metadata, so
 * the gateway renders exactly what the owning service decided.
 */
const STATUS_OF: Record<ProblemSlug, status> = {
  unauthenticated: status.UNAUTHENTICATED,
  "payment-required": status.FAILED_PRECONDITION,
  forbidden: status.PERMISSION_DENIED,
  "not-found": status.NOT_FOUND,
  conflict: status.ABORTED,
  gone: status.OUT_OF_RANGE,
  "invalid-request": status.INVALID_ARGUMENT,
  "payout-account-missing": status.FAILED_PRECONDITION,
  "bad-request": status.INVALID_ARGUMENT,
  "method-not-allowed": status.UNIMPLEMENTED,
  "payload-too-large": status.INVALID_ARGUMENT,
  "unsupported-media-type": status.INVALID_ARGUMENT,
  "headers-too-large": status.INVALID_ARGUMENT,
  "rate-limited": status.RESOURCE_EXHAUSTED,
  "upstream-failed": status.UNAVAILABLE,
  unavailable: status.UNAVAILABLE,
  internal: status.INTERNAL,
};

const PROBLEM_KEY = "c402-problem-bin";

export function grpcStatusFor(slug: ProblemSlug): status {
  return STATUS_OF[slug];
}

export function toServiceError(err: unknown): Partial<ServiceError> {
  const problem = problemOf(err);
  const metadata = new Metadata();
  metadata.set(
    PROBLEM_KEY,
    Buffer.from(
      JSON.stringify({
        slug: problem.slug,
        message: problem.message,
        help: problem.help,
        errors: problem.errors,
        extensions: problem.extensions,
        retry_after: problem.retryAfterSeconds,
      }),
    ),
  );
  return { code: STATUS_OF[problem.slug], details: problem.message, metadata };
}

export function fromServiceError(err: ServiceError): ProblemError {
  const raw = err.metadata?.get(PROBLEM_KEY)?.[0];
  if (raw) {
    try {
      const p = JSON.parse(Buffer.isBuffer(raw) ? raw.toString("utf8") : String(raw));
      if (typeof p.slug === "string" && isProblemSlug(p.slug)) {
        return new ProblemError(p.slug, {
          message: p.message,
          help: p.help,
          errors: p.errors,
          extensions: p.extensions,
          ...(Number.isSafeInteger(p.retry_after) && p.retry_after > 0 ? { retryAfterSeconds: p.retry_after } : {}),
        });
      }
    } catch {
      // fall through to the status-based mapping
    }
  }
  switch (err.code) {
    case status.DEADLINE_EXCEEDED:
    case status.UNAVAILABLE:
      return new ProblemError("unavailable", "A dependency of this service did not answer in time.");
    default:
      return new ProblemError("internal", "The service failed to handle this request.");
  }
}
