/** "Today" of the limits is the UTC day (ADR 21): the same day on every replica, whatever its time zone. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** When the UTC day of `at` ends: the next UTC midnight. */
export function nextUtcMidnight(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));
}
