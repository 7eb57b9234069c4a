import { timestampDate } from "@bufbuild/protobuf/wkt";
import { enqueueOutboxRow } from "@c402/bus";
import type { paymentEventsV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { scheduleEventRow, type ScheduleEvent } from "../events/schedule-events";
import { schedulesStore, type ListFilter, type PeriodRow, type ScheduleRow, type SchedulesDb } from "../store/schedules-store";
import { dayLengthMs, retryDelayMs, recheckDelayMs, type RetryPolicy } from "./retry-backoff";
import { seriesView, type SeriesView } from "./series-view";
import { CHARGEABLE_PERIOD_STATUSES, isEnded, type CancelledBy } from "./statuses";

export interface SeriesBookOptions {
  baseUrl: string;
  retry: RetryPolicy;
  /** The wall clock: record times (created, settled, ended) and test-mode series' clock. */
  wallClock?: () => Date;
  /** Called after a commit that wrote events, so the relay publishes them now. */
  onOutbox?: () => void;
  /**
   * Period 0's payment.settled of a series this service has not started yet
   * (payments' GetSeriesStart), undefined when payments sold no such series: a
   * read that comes before the event starts the series from it, as the event would.
   */
  startOf?: (scheduleId: string) => Promise<paymentEventsV1.PaymentSettled | undefined>;
}

export const noSuchSchedule = () => new ProblemError("not-found", "No such schedule.");

/**
 * The series and their periods: every change of state, each committed with
 * the schedule.* event it causes (outbox) while the series' row is locked, so
 * the consumer, the scheduler and the cancels of one series never interleave.
 */
export class SeriesBook {
  readonly wallClock: () => Date;

  constructor(
    readonly db: SchedulesDb,
    private readonly opts: SeriesBookOptions,
  ) {
    this.wallClock = opts.wallClock ?? (() => new Date());
  }

  /**
   * Starts a series from its period 0's payment.settled (`series` set):
   * active, period 0 settled, the held periods scheduled, and schedule.started.
   * The schedule id is the key: a second delivery (another event id) starts nothing.
   */
  async start(db: SchedulesDb, p: paymentEventsV1.PaymentSettled): Promise<boolean> {
    const series = p.series;
    if (!series || p.scheduleId === undefined) return false;
    const held = [...series.held].sort((a, b) => a.period - b.period);
    const first = held[0];
    if (!first?.validAfter || !first.validBefore) throw new Error(`series ${p.scheduleId} has no held period window`);
    const intervalMs = timestampDate(first.validBefore).getTime() - timestampDate(first.validAfter).getTime();
    // Period 0 covers the interval before period 1's window (the purchase's anchor T to T + I).
    const anchor = new Date(timestampDate(first.validAfter).getTime() - intervalMs);
    const settledAt = p.settledAt ? timestampDate(p.settledAt) : this.wallClock();
    const row: ScheduleRow = {
      id: p.scheduleId,
      account_id: series.accountId,
      checkout_id: p.checkoutId,
      payer: p.payer,
      network: p.network,
      test_mode: p.testMode,
      interval_days: series.intervalDays,
      periods: series.periods,
      amount_usd: p.amountUsd,
      total: p.total.toString(),
      status: "active",
      created_at: settledAt,
      ended_at: null,
      cancelled_by: null,
      cancel_reason: null,
    };
    const blank = { attempts: 0, last_failure: null, failure_notified: false, next_attempt_at: null, lease_until: null, cancelled_onchain: false };
    const periods: PeriodRow[] = [
      {
        ...blank,
        schedule_id: row.id,
        period: 0,
        status: "settled",
        valid_after: anchor,
        valid_before: timestampDate(first.validAfter),
        nonce: null,
        payment_id: p.paymentId,
        settled_at: settledAt,
      },
      ...held.map((h): PeriodRow => ({
        ...blank,
        schedule_id: row.id,
        period: h.period,
        status: "scheduled",
        valid_after: h.validAfter ? timestampDate(h.validAfter) : anchor,
        valid_before: h.validBefore ? timestampDate(h.validBefore) : anchor,
        nonce: h.nonce.toLowerCase(),
        payment_id: null,
        settled_at: null,
      })),
    ];
    return this.inTransaction(db, async (trx) => {
      if (!(await schedulesStore.insertSeries(trx, row, periods))) return false;
      await this.emit(trx, row.id, [{ type: "started", paymentId: p.paymentId }]);
      return true;
    });
  }

  /**
   * Period k settled (payment.settled with schedule_period k, or payments'
   * SETTLED answer to the scheduler): once, with schedule.charged, and
   * schedule.completed when it was the last. The money moved, so a period
   * settles even after the series was cancelled or lapsed (its status stays).
   */
  async settle(db: SchedulesDb, scheduleId: string, period: number, paymentId: string, settledAt = this.wallClock()): Promise<boolean> {
    return this.inTransaction(db, async (trx) => {
      const row = await schedulesStore.lock(trx, scheduleId);
      if (!row) return false;
      const changed = await trx
        .updateTable("schedule_periods")
        .set({ status: "settled", payment_id: paymentId, settled_at: settledAt, lease_until: null, next_attempt_at: null })
        .where("schedule_id", "=", scheduleId)
        .where("period", "=", period)
        .where("status", "<>", "settled")
        .executeTakeFirst();
      if (changed.numUpdatedRows === 0n) return false;
      const events: ScheduleEvent[] = [{ type: "charged", period, paymentId }];
      const periods = (await schedulesStore.periodsOf(trx, [scheduleId])).get(scheduleId) ?? [];
      if (row.status === "active" && periods.every((p) => p.status === "settled")) {
        await schedulesStore.updateSeries(trx, scheduleId, { status: "completed", ended_at: this.wallClock() });
        events.push({ type: "completed" });
      }
      await this.emit(trx, scheduleId, events);
      return true;
    });
  }

  /**
   * A charge that could not settle yet (RETRYABLE, or payments unreachable):
   * the next attempt after the backoff, by the series' clock (`now`).
   * schedule.charge_failed is sent once per period, and only when `notify`:
   * payments' own outage is not the buyer's failure to pay.
   */
  async retry(scheduleId: string, period: number, reason: string, now: Date, notify: boolean): Promise<void> {
    await this.inTransaction(this.db, async (trx) => {
      const row = await schedulesStore.lock(trx, scheduleId);
      const p = await this.chargeablePeriod(trx, scheduleId, period);
      if (!row || !p || row.status !== "active") return;
      const attempts = p.attempts + 1;
      const retryAt = new Date(now.getTime() + retryDelayMs(this.opts.retry, attempts, this.dayMs(row, p)));
      const firstNotice = notify && !p.failure_notified;
      await schedulesStore.updatePeriod(trx, scheduleId, period, {
        status: "retrying",
        attempts,
        last_failure: reason,
        next_attempt_at: retryAt,
        lease_until: null,
        ...(firstNotice ? { failure_notified: true } : {}),
      });
      if (firstNotice) await this.emit(trx, scheduleId, [{ type: "charge_failed", period, reason, retryAt, windowClosesAt: p.valid_before }]);
    });
  }

  /** An answer that says "ask again" (PENDING, NOT_YET): the period keeps its status and is asked again soon. */
  async recheck(scheduleId: string, period: number, now: Date): Promise<void> {
    await this.inTransaction(this.db, async (trx) => {
      const row = await schedulesStore.get(trx, scheduleId);
      const p = await this.chargeablePeriod(trx, scheduleId, period);
      if (!row || !p) return;
      const nextAttempt = new Date(now.getTime() + recheckDelayMs(this.dayMs(row, p)));
      await schedulesStore.updatePeriod(trx, scheduleId, period, { next_attempt_at: nextAttempt, lease_until: null }, CHARGEABLE_PERIOD_STATUSES);
    });
  }

  /** Gives a claimed period back untouched (the round stopped before asking payments). */
  async release(scheduleId: string, period: number): Promise<void> {
    await schedulesStore.updatePeriod(this.db, scheduleId, period, { lease_until: null });
  }

  /**
   * Period k can never settle (its window closed unsettled, or payments said
   * FINAL): it lapses, the series ends `lapsed` and its later periods are
   * cancelled, with schedule.lapsed.
   */
  async lapse(scheduleId: string, period: number, reason: string): Promise<void> {
    await this.inTransaction(this.db, async (trx) => {
      const row = await schedulesStore.lock(trx, scheduleId);
      if (!row || row.status !== "active") return;
      const changed = await schedulesStore.updatePeriod(
        trx,
        scheduleId,
        period,
        { status: "lapsed", last_failure: reason, lease_until: null, next_attempt_at: null },
        CHARGEABLE_PERIOD_STATUSES,
      );
      if (!changed) return;
      await schedulesStore.endOpenPeriods(trx, scheduleId, "cancelled");
      await schedulesStore.updateSeries(trx, scheduleId, { status: "lapsed", ended_at: this.wallClock() });
      await this.emit(trx, scheduleId, [{ type: "lapsed", period, reason }]);
    });
  }

  /**
   * Ends an active series by a cancel: every period still to charge is
   * cancelled (settled periods stay settled), with schedule.cancelled.
   * Answers false when the series had already ended (nothing changed).
   */
  async cancel(db: SchedulesDb, scheduleId: string, c: { by: CancelledBy; reason?: string; onchain: boolean }): Promise<boolean> {
    return this.inTransaction(db, async (trx) => {
      const row = await schedulesStore.lock(trx, scheduleId);
      if (!row) throw noSuchSchedule();
      if (isEnded(row.status)) return false;
      await schedulesStore.endOpenPeriods(trx, scheduleId, "cancelled");
      await schedulesStore.updateSeries(trx, scheduleId, {
        status: "cancelled",
        ended_at: this.wallClock(),
        cancelled_by: c.by,
        cancel_reason: c.reason ?? null,
      });
      await this.emit(trx, scheduleId, [{ type: "cancelled", by: c.by, ...(c.reason !== undefined ? { reason: c.reason } : {}), onchain: c.onchain }]);
      return true;
    });
  }

  /** The series as answers describe it; NOT_FOUND when none (or, with `accountId`, not that account's). */
  async view(scheduleId: string, accountId?: string, db: SchedulesDb = this.db): Promise<SeriesView> {
    const row = (await schedulesStore.get(db, scheduleId)) ?? (await this.startedOnRead(db, scheduleId));
    if (!row || (accountId !== undefined && row.account_id !== accountId)) throw noSuchSchedule();
    const periods = (await schedulesStore.periodsOf(db, [row.id])).get(row.id) ?? [];
    return seriesView(row, periods, this.opts.baseUrl);
  }

  /**
   * A series payments sold whose payment.settled is not consumed yet (the
   * purchase answered its URL moments ago): started now from payments' record
   * of period 0, exactly as the event starts it (the event then starts nothing).
   */
  private async startedOnRead(db: SchedulesDb, scheduleId: string) {
    const settled = await this.opts.startOf?.(scheduleId);
    if (!settled) return undefined;
    await this.start(db, settled);
    return schedulesStore.get(db, scheduleId);
  }

  /** An account's series of one mode, newest first. */
  async list(filter: ListFilter): Promise<SeriesView[]> {
    const rows = await schedulesStore.list(this.db, filter);
    const periods = await schedulesStore.periodsOf(
      this.db,
      rows.map((r) => r.id),
    );
    return rows.map((r) => seriesView(r, periods.get(r.id) ?? [], this.opts.baseUrl));
  }

  /** Runs `fn` in the caller's transaction when there is one (the consumer's), else in a new one; pokes the relay after a commit of its own. */
  private async inTransaction<T>(db: SchedulesDb, fn: (trx: SchedulesDb) => Promise<T>): Promise<T> {
    if (db.isTransaction) return fn(db);
    const result = await db.transaction().execute(fn);
    this.opts.onOutbox?.();
    return result;
  }

  /** Writes the events of a change, each with the series as the change leaves it. */
  private async emit(trx: SchedulesDb, scheduleId: string, events: ScheduleEvent[]): Promise<void> {
    const series = await this.view(scheduleId, undefined, trx);
    for (const event of events) await enqueueOutboxRow(trx, scheduleEventRow(series, event));
  }

  private async chargeablePeriod(trx: SchedulesDb, scheduleId: string, period: number): Promise<PeriodRow | undefined> {
    return trx
      .selectFrom("schedule_periods")
      .selectAll()
      .where("schedule_id", "=", scheduleId)
      .where("period", "=", period)
      .where("status", "in", [...CHARGEABLE_PERIOD_STATUSES])
      .executeTakeFirst();
  }

  /** The length of the series' day: live 86,400 s, a test-mode series' compressed day from its own windows. */
  private dayMs(row: ScheduleRow, p: PeriodRow): number | undefined {
    return row.test_mode ? dayLengthMs({ validAfter: p.valid_after, validBefore: p.valid_before }, row.interval_days) : undefined;
  }
}
