import type { FieldError } from "@c402/problems";

/**
 * Recurring series (spec, Schedule; ADR 20): `schedule_interval_days` and
 * `schedule_periods` are frozen on the checkout. Period 0 is paid at purchase,
 * each later period by an authorization the buyer signs then, charged on its
 * date. A series is charged on Base only: every checkout has a Base rail
 * (pay_to, sent or the account's standing EVM wallet, else 422 naming pay_to),
 * and payments quotes a series on it alone. Never with escrow (an escrow
 * checkout or an escrow twin), never a package, never gated content.
 */
export const SCHEDULE_LIMITS = { periodsMin: 2, periodsMax: 24, intervalDaysMin: 1, intervalDaysMax: 366 };

/** A series' terms as stored and answered. */
export interface ScheduleTerms {
  interval_days: number;
  periods: number;
}

/** CreateCheckoutRequest.schedule as it arrives (catalog.v1.CheckoutSchedule). */
export interface ScheduleTermsInput {
  intervalDays: number;
  periods: number;
}

const inRange = (n: number, min: number, max: number) => Number.isInteger(n) && n >= min && n <= max;

/** What else the create asks for that a series cannot be sold with, by what the refusal says of it. */
interface SeriesCompanions {
  escrow?: unknown;
  escrowTwin?: unknown;
  maxDeliveries?: number;
  contentJson?: string;
}

/**
 * The create's series terms, checked; null for a checkout that is not a
 * series. Pushes a field error naming schedule_interval_days or
 * schedule_periods for each refusal.
 */
export function scheduleOfCreate(input: SeriesCompanions & { schedule?: ScheduleTermsInput }, errors: FieldError[]): ScheduleTerms | null {
  const s = input.schedule;
  if (s === undefined) return null;
  const before = errors.length;
  const { intervalDaysMin, intervalDaysMax, periodsMin, periodsMax } = SCHEDULE_LIMITS;
  if (!inRange(s.intervalDays, intervalDaysMin, intervalDaysMax)) {
    errors.push({ field: "schedule_interval_days", reason: `must be an integer from ${intervalDaysMin} to ${intervalDaysMax}` });
  }
  if (!inRange(s.periods, periodsMin, periodsMax)) {
    errors.push({ field: "schedule_periods", reason: `must be an integer from ${periodsMin} to ${periodsMax} (period 0, paid at purchase, included)` });
  }
  const companions: [boolean, string][] = [
    [input.escrow !== undefined, "an escrow checkout"],
    [input.escrowTwin !== undefined, "an escrow twin (escrow_offer)"],
    [input.maxDeliveries !== undefined, "a package (max_deliveries)"],
    [input.contentJson !== undefined, "gated content (content)"],
  ];
  for (const [sent, what] of companions) {
    if (sent) errors.push({ field: "schedule_periods", reason: `a recurring series cannot be ${what}` });
  }
  return errors.length === before ? { interval_days: s.intervalDays, periods: s.periods } : null;
}
