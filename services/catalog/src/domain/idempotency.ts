/**
 * The rules of Idempotency-Key on creates (decisions.md): how long a key is
 * honoured, when an in-flight claim counts as abandoned, and what a retry
 * refused for a claim in flight is told.
 */

/** A key is honoured this long after the create that claimed it. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * A claim still in flight after this long belongs to a create that died (a
 * create takes milliseconds; its calls to identity time out within seconds),
 * so the next request with the key takes it over and executes. Safe at any
 * length: a create commits only while its own claim holds the key.
 */
export const IDEMPOTENCY_CLAIM_LEASE_MS = 30_000;

/** A claim younger than this is a create at work, which finishes in a moment. */
const WORKING_CLAIM_MS = 5_000;

/**
 * Retry-After for a request refused because the key's claim is in flight: a
 * second for a create at work; once the claim looks stuck, the time left
 * until it can be taken over.
 */
export function retryAfterSecondsForClaim(claimedAt: Date, now: Date): number {
  const age = now.getTime() - claimedAt.getTime();
  if (age < WORKING_CLAIM_MS) return 1;
  return Math.max(1, Math.ceil((IDEMPOTENCY_CLAIM_LEASE_MS - age) / 1000));
}
