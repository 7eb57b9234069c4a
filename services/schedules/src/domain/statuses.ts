/** A series' status (docs/decisions.md, Recurring series): active until every period settled, it was cancelled, or a period lapsed. */
export const SCHEDULE_STATUSES = ["active", "completed", "cancelled", "lapsed"] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

/**
 * A period's status: settled (paid), scheduled (its window has not opened),
 * due (open and claimed for a charge), retrying (a charge failed; retried with
 * backoff until the window closes), lapsed (its window closed unsettled, or the
 * authorization can never settle), cancelled (the series ended before it).
 */
export const PERIOD_STATUSES = ["settled", "scheduled", "due", "retrying", "lapsed", "cancelled"] as const;
export type PeriodStatus = (typeof PERIOD_STATUSES)[number];

/** The statuses of a period still to be charged. */
export const CHARGEABLE_PERIOD_STATUSES = ["scheduled", "due", "retrying"] as const satisfies readonly PeriodStatus[];

/** Who ended a series by a cancel. */
export type CancelledBy = "buyer" | "seller" | "system";

export const isEnded = (status: ScheduleStatus) => status !== "active";
