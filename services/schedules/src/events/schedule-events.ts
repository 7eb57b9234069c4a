import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { outboxRow, type OutboxRow } from "@c402/bus";
import { EVENT_TYPES, scheduleEventsV1, TOPICS } from "@c402/contracts";
import type { SeriesView } from "../domain/series-view";

/** The schedule.* events and what each adds to the series (spec, Events). */
export type ScheduleEvent =
  | { type: "started"; paymentId: string }
  | { type: "charged"; period: number; paymentId: string }
  | { type: "charge_failed"; period: number; reason: string; retryAt: Date; windowClosesAt: Date }
  | { type: "lapsed"; period: number; reason: string }
  | { type: "cancelled"; by: string; reason?: string; onchain: boolean }
  | { type: "completed" };

/** data.schedule: the series as the event leaves it. */
function snapshot(s: SeriesView): scheduleEventsV1.ScheduleSnapshot {
  return create(scheduleEventsV1.ScheduleSnapshotSchema, {
    id: s.id,
    url: s.url,
    status: s.status,
    periods: s.periods,
    periodsSettled: s.periodsSettled,
    ...(s.paidThrough ? { paidThrough: timestampFromDate(s.paidThrough) } : {}),
    ...(s.nextChargeAt ? { nextChargeAt: timestampFromDate(s.nextChargeAt) } : {}),
    accountId: s.accountId,
    checkoutId: s.checkoutId,
    payer: s.payer,
    network: s.network,
    testMode: s.testMode,
    intervalDays: s.intervalDays,
  });
}

function typeAndPayload(e: ScheduleEvent, schedule: scheduleEventsV1.ScheduleSnapshot): [string, Uint8Array] {
  const V = scheduleEventsV1;
  switch (e.type) {
    case "started":
      return [EVENT_TYPES.scheduleStarted, toBinary(V.ScheduleStartedSchema, create(V.ScheduleStartedSchema, { schedule, paymentId: e.paymentId }))];
    case "charged":
      return [
        EVENT_TYPES.scheduleCharged,
        toBinary(V.ScheduleChargedSchema, create(V.ScheduleChargedSchema, { schedule, period: e.period, paymentId: e.paymentId })),
      ];
    case "charge_failed":
      return [
        EVENT_TYPES.scheduleChargeFailed,
        toBinary(
          V.ScheduleChargeFailedSchema,
          create(V.ScheduleChargeFailedSchema, {
            schedule,
            period: e.period,
            reason: e.reason,
            retryAt: timestampFromDate(e.retryAt),
            windowClosesAt: timestampFromDate(e.windowClosesAt),
          }),
        ),
      ];
    case "lapsed":
      return [EVENT_TYPES.scheduleLapsed, toBinary(V.ScheduleLapsedSchema, create(V.ScheduleLapsedSchema, { schedule, period: e.period, reason: e.reason }))];
    case "cancelled":
      return [
        EVENT_TYPES.scheduleCancelled,
        toBinary(
          V.ScheduleCancelledSchema,
          create(V.ScheduleCancelledSchema, { schedule, by: e.by, ...(e.reason !== undefined ? { reason: e.reason } : {}), onchain: e.onchain }),
        ),
      ];
    case "completed":
      return [EVENT_TYPES.scheduleCompleted, toBinary(V.ScheduleCompletedSchema, create(V.ScheduleCompletedSchema, { schedule }))];
  }
}

/**
 * The outbox row of a schedule event, written in the transaction that makes
 * the change: on the schedule topic, keyed by the schedule id (one series'
 * events in order).
 */
export function scheduleEventRow(series: SeriesView, event: ScheduleEvent): OutboxRow {
  const [type, payload] = typeAndPayload(event, snapshot(series));
  return outboxRow({ topic: TOPICS.scheduleEvents, type, accountId: series.accountId, testMode: series.testMode, aggregateId: series.id, payload });
}
