/**
 * When a failed delivery is tried again: exponential backoff from 30 s,
 * doubling, capped at 12 hours, each delay jittered by ±20% so that receivers
 * coming back from an outage are not hit by every retry at once. Retries stop
 * at the delivery's give-up time, about three days after the event: the last
 * attempt is made at that time, and a failure then fails the delivery.
 * A receiver's Retry-After (429 or 503) is honoured when it asks for longer.
 */
export const RETRY_WINDOW_MS = 72 * 3_600_000;
const FIRST_DELAY_MS = 30_000;
const MAX_DELAY_MS = 12 * 3_600_000;
const JITTER = 0.2;

/** The delay after failed attempt `attempt` (1-based), before jitter. */
export function backoffMs(attempt: number): number {
  return Math.min(FIRST_DELAY_MS * 2 ** Math.max(0, attempt - 1), MAX_DELAY_MS);
}

/**
 * When attempt `attempt + 1` is due, or null when the delivery has failed for
 * good. `random` is in [0, 1); `retryAfterMs` is the receiver's wish, if any.
 */
export function nextAttemptAt(o: { attempt: number; now: Date; giveUpAt: Date; random: number; retryAfterMs?: number }): Date | null {
  if (o.now.getTime() >= o.giveUpAt.getTime()) return null;
  const jittered = backoffMs(o.attempt) * (1 - JITTER + 2 * JITTER * o.random);
  const delay = Math.max(jittered, Math.min(o.retryAfterMs ?? 0, MAX_DELAY_MS));
  return new Date(Math.min(o.now.getTime() + delay, o.giveUpAt.getTime()));
}

/** A Retry-After header in milliseconds (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: Date): number | undefined {
  if (!header) return undefined;
  const text = header.trim();
  if (/^[0-9]{1,9}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}
