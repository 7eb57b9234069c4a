/** How long a held period that could not settle waits before the next attempt (SCHEDULE_RETRY_BASE_SECONDS, SCHEDULE_RETRY_MAX_SECONDS). */
export interface RetryPolicy {
  baseMs: number;
  maxMs: number;
}

/** A live day, the unit a series' interval is counted in. */
export const DAY_MS = 86_400_000;

/**
 * The wait after the `attempts`-th failed attempt (1 = the first): the base,
 * doubled per attempt, capped. `dayMs` is the length of the series' day: a
 * test-mode series runs on a compressed clock (ADR 20), so its waits shrink
 * in the same ratio (never below a second, so a round is not spent on it).
 */
export function retryDelayMs(policy: RetryPolicy, attempts: number, dayMs = DAY_MS): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 30);
  const live = Math.min(policy.baseMs * 2 ** exponent, policy.maxMs);
  return dayMs >= DAY_MS ? live : Math.max(1_000, Math.round((live * dayMs) / DAY_MS));
}

/** How long an answer that says "not yet" or "pending" waits before the period is asked about again (live: 15 s; scaled like a retry). */
export function recheckDelayMs(dayMs = DAY_MS): number {
  const live = 15_000;
  return dayMs >= DAY_MS ? live : Math.max(1_000, Math.round((live * dayMs) / DAY_MS));
}

/** The length of a series' day, from one held period's window (interval_days of them): 86,400 s live, compressed for a test-mode series. */
export function dayLengthMs(window: { validAfter: Date; validBefore: Date }, intervalDays: number): number {
  return Math.max(1, Math.round((window.validBefore.getTime() - window.validAfter.getTime()) / Math.max(intervalDays, 1)));
}
