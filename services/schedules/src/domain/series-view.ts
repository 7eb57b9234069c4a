import type { PeriodRow, ScheduleRow } from "../store/schedules-store";
import { CHARGEABLE_PERIOD_STATUSES, type ScheduleStatus } from "./statuses";

/** A series as every answer and event describes it (spec, Schedule), computed from its rows. */
export interface SeriesView {
  id: string;
  url: string;
  accountId: string;
  checkoutId: string;
  status: ScheduleStatus;
  periods: number;
  periodsSettled: number;
  /** The end of the last settled period's window. */
  paidThrough: Date | null;
  /** When the next period to charge opens (or its next retry); null once the series ended. */
  nextChargeAt: Date | null;
  intervalDays: number;
  payer: string;
  network: string;
  testMode: boolean;
  amountUsd: string;
  total: bigint;
  createdAt: Date;
  endedAt: Date | null;
  cancelledBy: string | null;
  cancelReason: string | null;
  periodsDetail: PeriodRow[];
}

/** A series' public page (the buyer's view). */
export const scheduleUrl = (baseUrl: string, id: string) => `${baseUrl}/schedule/${id}`;

const chargeable = new Set<string>(CHARGEABLE_PERIOD_STATUSES);

export function seriesView(row: ScheduleRow, periods: readonly PeriodRow[], baseUrl: string): SeriesView {
  const settled = periods.filter((p) => p.status === "settled");
  const paidThrough = settled.reduce<Date | null>((last, p) => (last === null || p.valid_before > last ? p.valid_before : last), null);
  const next = row.status === "active" ? periods.find((p) => chargeable.has(p.status)) : undefined;
  const nextChargeAt = next ? (next.next_attempt_at && next.next_attempt_at > next.valid_after ? next.next_attempt_at : next.valid_after) : null;
  return {
    id: row.id,
    url: scheduleUrl(baseUrl, row.id),
    accountId: row.account_id,
    checkoutId: row.checkout_id,
    status: row.status,
    periods: row.periods,
    periodsSettled: settled.length,
    paidThrough,
    nextChargeAt,
    intervalDays: row.interval_days,
    payer: row.payer,
    network: row.network,
    testMode: row.test_mode,
    amountUsd: row.amount_usd,
    total: BigInt(row.total),
    createdAt: row.created_at,
    endedAt: row.ended_at,
    cancelledBy: row.cancelled_by,
    cancelReason: row.cancel_reason,
    periodsDetail: [...periods].sort((a, b) => a.period - b.period),
  };
}
