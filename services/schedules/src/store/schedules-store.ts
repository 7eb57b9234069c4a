import { sql, type Kysely, type Selectable } from "kysely";
import type { PeriodStatus, ScheduleStatus } from "../domain/statuses";

/** The service's schema: raw SQL names its tables in it (kysely's withSchema qualifies only what its builder writes). */
export const SCHEDULES_SCHEMA = "schedules";
const periodsTable = sql.id(SCHEDULES_SCHEMA, "schedule_periods");
const schedulesTable = sql.id(SCHEDULES_SCHEMA, "schedules");

/** schedules' schema: series, their periods, the processed events and the outbox. */
export type SchedulesDb = Kysely<SchedulesTables>;

export interface SchedulesTables {
  schedules: SchedulesTable;
  schedule_periods: SchedulePeriodsTable;
}

export interface SchedulesTable {
  id: string;
  account_id: string;
  checkout_id: string;
  payer: string;
  network: string;
  test_mode: boolean;
  interval_days: number;
  periods: number;
  amount_usd: string;
  /** What one period moves, atomic units (bigint, read back as text). */
  total: string;
  status: ScheduleStatus;
  created_at: Date;
  ended_at: Date | null;
  cancelled_by: string | null;
  cancel_reason: string | null;
}

export interface SchedulePeriodsTable {
  schedule_id: string;
  period: number;
  status: PeriodStatus;
  valid_after: Date;
  valid_before: Date;
  nonce: string | null;
  payment_id: string | null;
  settled_at: Date | null;
  attempts: number;
  last_failure: string | null;
  failure_notified: boolean;
  next_attempt_at: Date | null;
  lease_until: Date | null;
  cancelled_onchain: boolean;
}

export type ScheduleRow = Selectable<SchedulesTable>;
export type PeriodRow = Selectable<SchedulePeriodsTable>;

export interface ListFilter {
  accountId: string;
  testMode: boolean;
  checkoutId?: string;
  status?: ScheduleStatus;
  after?: { createdAt: Date; id: string };
  limit: number;
}

export const schedulesStore = {
  /** Inserts the series and its periods; false when the series already exists (a redelivered start). */
  async insertSeries(db: SchedulesDb, series: ScheduleRow, periods: PeriodRow[]): Promise<boolean> {
    const inserted = await db
      .insertInto("schedules")
      .values(series)
      .onConflict((oc) => oc.column("id").doNothing())
      .returning("id")
      .executeTakeFirst();
    if (!inserted) return false;
    await db.insertInto("schedule_periods").values(periods).execute();
    return true;
  },

  get: (db: SchedulesDb, id: string) => db.selectFrom("schedules").selectAll().where("id", "=", id).executeTakeFirst(),

  /** The series, locked for a change in the caller's transaction (one change at a time per series). */
  lock: (db: SchedulesDb, id: string) => db.selectFrom("schedules").selectAll().where("id", "=", id).forUpdate().executeTakeFirst(),

  async periodsOf(db: SchedulesDb, ids: readonly string[]): Promise<Map<string, PeriodRow[]>> {
    const byId = new Map<string, PeriodRow[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return byId;
    const rows = await db.selectFrom("schedule_periods").selectAll().where("schedule_id", "in", ids).orderBy("schedule_id").orderBy("period").execute();
    for (const row of rows) byId.get(row.schedule_id)?.push(row);
    return byId;
  },

  list(db: SchedulesDb, f: ListFilter) {
    let q = db.selectFrom("schedules").selectAll().where("account_id", "=", f.accountId).where("test_mode", "=", f.testMode);
    if (f.checkoutId !== undefined) q = q.where("checkout_id", "=", f.checkoutId);
    if (f.status !== undefined) q = q.where("status", "=", f.status);
    if (f.after) {
      const { createdAt, id } = f.after;
      q = q.where(sql<boolean>`(created_at, id) < (${createdAt}, ${id})`);
    }
    return q.orderBy("created_at", "desc").orderBy("id", "desc").limit(f.limit).execute();
  },

  /**
   * Claims up to `limit` periods of active series of one mode that are due by
   * that mode's clock (`now`: their window opened) whose next attempt is due by the wall clock
   * and that no replica holds (no lease, or an expired one, by the wall clock
   * `wallNow`). Locked rows are skipped (another replica is claiming them), and
   * the claim is a lease written in the same statement, so a slow charge is
   * not taken by another replica until the lease expires. A period whose
   * window already closed is claimed too, whatever its backoff: the charge
   * path lapses it (schedule.lapsed when the window closes). Only a
   * series' earliest period still to charge is claimed (a lapse ends the series).
   */
  claimDue(db: SchedulesDb, c: { testMode: boolean; now: Date; wallNow: Date; leaseUntil: Date; limit: number }): Promise<PeriodRow[]> {
    return sql<PeriodRow>`
      with due as (
        select p.schedule_id, p.period
        from ${periodsTable} p
        join ${schedulesTable} s on s.id = p.schedule_id
        where s.status = 'active'
          and s.test_mode = ${c.testMode}
          and p.status in ('scheduled', 'due', 'retrying')
          and p.valid_after < ${c.now}
          -- A retry's backoff is counted on the wall clock (the series' clock may stand still: a devchain between blocks);
          -- a window that closed is not waited for: the period lapses now, not when its backoff ends.
          and (p.next_attempt_at is null or p.next_attempt_at <= ${c.wallNow} or p.valid_before <= ${c.now})
          and (p.lease_until is null or p.lease_until < ${c.wallNow})
          -- One period of a series at a time, in order: a later one waits until the earlier is settled or lapsed.
          and not exists (
            select 1 from ${periodsTable} q
            where q.schedule_id = p.schedule_id and q.period < p.period and q.status in ('scheduled', 'due', 'retrying')
          )
        order by p.valid_after, p.schedule_id, p.period
        limit ${c.limit}
        for update of p skip locked
      )
      update ${periodsTable} p
      set lease_until = ${c.leaseUntil},
          status = case when p.status = 'scheduled' then 'due' else p.status end
      from due
      where p.schedule_id = due.schedule_id and p.period = due.period
      returning p.*`
      .execute(db)
      .then((r) => r.rows);
  },

  /** Changes one period in the caller's transaction; false when `onlyIf` no longer holds (another path got there first). */
  async updatePeriod(
    db: SchedulesDb,
    scheduleId: string,
    period: number,
    change: Partial<SchedulePeriodsTable>,
    onlyIfStatus?: readonly PeriodStatus[],
  ): Promise<boolean> {
    let q = db.updateTable("schedule_periods").set(change).where("schedule_id", "=", scheduleId).where("period", "=", period);
    if (onlyIfStatus) q = q.where("status", "in", [...onlyIfStatus]);
    const r = await q.executeTakeFirst();
    return r.numUpdatedRows > 0n;
  },

  /** Ends every period still to be charged (after `fromPeriod` is lapsed or cancelled, or all of them). */
  endOpenPeriods: (db: SchedulesDb, scheduleId: string, status: "cancelled" | "lapsed") =>
    db
      .updateTable("schedule_periods")
      .set({ status, lease_until: null, next_attempt_at: null })
      .where("schedule_id", "=", scheduleId)
      .where("status", "in", ["scheduled", "due", "retrying"])
      .execute(),

  async updateSeries(db: SchedulesDb, id: string, change: Partial<SchedulesTable>): Promise<void> {
    await db.updateTable("schedules").set(change).where("id", "=", id).execute();
  },
};
