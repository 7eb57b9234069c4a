import { formatUsd, MoneyFormatError, parseUsd } from "@c402/money";
import { invalid, type FieldError } from "@c402/problems";
import { nextUtcMidnight } from "./utc-day";

/** The highest per-day limit an account may set: $100,000 (a custodial wallet is for agents' small payments). */
export const MAX_PER_DAY_ATOMIC = 100_000_000_000n;

export interface LimitsView {
  perPayment: bigint;
  perDay: bigint;
  spentToday: bigint;
  leftToday: bigint;
  dayResetsAt: Date;
}

/** The limits as read back: what the day counted so far (never a negative left). */
export function limitsView(perPayment: bigint, perDay: bigint, spentToday: bigint, now: Date): LimitsView {
  const left = perDay - spentToday;
  return { perPayment, perDay, spentToday, leftToday: left > 0n ? left : 0n, dayResetsAt: nextUtcMidnight(now) };
}

/** A positive USD amount of at most 6 decimals and at most `max`; the reason when it is not. */
export function usdAmountProblem(text: string, max: bigint = MAX_PER_DAY_ATOMIC): { atomic: bigint } | { reason: string } {
  let atomic: bigint;
  try {
    atomic = parseUsd(text.trim());
  } catch (err) {
    return { reason: err instanceof MoneyFormatError ? err.message : 'must be a decimal string such as "1.50"' };
  }
  if (atomic <= 0n) return { reason: "must be greater than zero" };
  if (atomic > max) return { reason: `must be at most ${formatUsd(max)}` };
  return { atomic };
}

/** SetLimits' input checked: 422 naming each field that is wrong, and per_payment ≤ per_day. */
export function parseLimits(input: { perPaymentUsd: string; perDayUsd: string }): { perPayment: bigint; perDay: bigint } {
  const errors: FieldError[] = [];
  const perPayment = usdAmountProblem(input.perPaymentUsd);
  const perDay = usdAmountProblem(input.perDayUsd);
  if ("reason" in perPayment) errors.push({ field: "per_payment_usd", reason: perPayment.reason });
  if ("reason" in perDay) errors.push({ field: "per_day_usd", reason: perDay.reason });
  if ("atomic" in perPayment && "atomic" in perDay && perPayment.atomic > perDay.atomic) {
    errors.push({ field: "per_payment_usd", reason: "must not be more than per_day_usd" });
  }
  if (errors.length > 0 || !("atomic" in perPayment) || !("atomic" in perDay)) throw invalid(errors);
  return { perPayment: perPayment.atomic, perDay: perDay.atomic };
}
