import { paymentsV1 } from "@c402/contracts";
import type { Logger } from "@c402/logging";
import { ProblemError } from "@c402/problems";
import type { ServiceClient } from "@c402/rpc";
import type { ChainClock } from "../chain/chain-clock";
import { schedulesStore, type PeriodRow } from "../store/schedules-store";
import type { SeriesBook } from "./series-book";

/** What the service asks of payments (ADR 20): charge a held period, cancel held authorizations on chain, a series' start before its event came. */
export type PaymentsForSchedules = Pick<ServiceClient<typeof paymentsV1.PaymentsService>, "chargeHeldPeriod" | "cancelHeldAuthorizations" | "getSeriesStart">;

export interface ChargeSchedulerOptions {
  /** A live series' clock; undefined: live periods are never charged. */
  chain?: ChainClock;
  /** How long a replica owns a claimed period (wall clock). */
  leaseMs: number;
  /** Periods claimed per mode per round (charged concurrently). */
  batch?: number;
  /** How long one ChargeHeldPeriod may take (a live settlement waits for its confirmation). */
  chargeTimeoutMs?: number;
  logger?: Logger;
}

/** The reason recorded when payments could not be asked (the call failed, not the charge). */
export const PAYMENTS_UNAVAILABLE = "payments_unavailable";

/**
 * Charges held periods on their dates, on every replica. A round claims the
 * due periods of each mode (FOR UPDATE SKIP LOCKED, then a lease, so one
 * period is charged by one replica at a time) by that mode's clock: the chain's
 * latest block time for a live series (the clock the token checks), the wall
 * clock for a test-mode one. Each is charged through payments, whose answer
 * for a period is always its first outcome (never a second transfer), and the
 * answer moves the period: settled, asked again, retried with backoff, or
 * lapsed once its window closed.
 */
export class ChargeScheduler {
  constructor(
    private readonly book: SeriesBook,
    private readonly payments: PaymentsForSchedules,
    private readonly opts: ChargeSchedulerOptions,
  ) {}

  /** One round: test-mode series first (they need no chain), then live ones. Answers how many periods were charged. */
  async round(): Promise<number> {
    let charged = await this.sweep(true, this.book.wallClock());
    if (this.opts.chain) charged += await this.sweep(false, await this.opts.chain.now());
    return charged;
  }

  /** Claims and charges the periods of one mode due at `now` (that mode's clock). */
  async sweep(testMode: boolean, now: Date): Promise<number> {
    const wallNow = this.book.wallClock();
    const claimed = await schedulesStore.claimDue(this.book.db, {
      testMode,
      now,
      wallNow,
      leaseUntil: new Date(wallNow.getTime() + this.opts.leaseMs),
      limit: this.opts.batch ?? 20,
    });
    await Promise.all(claimed.map((p) => this.charge(p, now, wallNow)));
    return claimed.length;
  }

  /**
   * `now` is the series' clock (a window opens and closes by it); `wallNow` the wall clock, which a retry's
   * backoff counts on: a devchain mines no block while nothing is sent, so its clock stands still between
   * transactions and a backoff counted on it would never end.
   */
  private async charge(p: PeriodRow, now: Date, wallNow: Date): Promise<void> {
    const windowClosed = now.getTime() >= p.valid_before.getTime();
    let answer: paymentsV1.ChargeHeldPeriodResponse;
    try {
      answer = await this.payments.chargeHeldPeriod({ scheduleId: p.schedule_id, period: p.period }, { timeoutMs: this.opts.chargeTimeoutMs ?? 60_000 });
    } catch (err) {
      this.opts.logger?.warn({ err, scheduleId: p.schedule_id, period: p.period }, "a held period could not be charged: payments did not answer");
      // A refusal (NOT_FOUND: payments never issued it) can never settle; an outage is retried without telling anyone.
      if (windowClosed || (err instanceof ProblemError && err.status < 500)) {
        await this.book.lapse(p.schedule_id, p.period, windowClosed ? "window_closed" : (err as ProblemError).slug);
      } else {
        await this.book.retry(p.schedule_id, p.period, PAYMENTS_UNAVAILABLE, wallNow, false);
      }
      return;
    }
    const { ChargeOutcome } = paymentsV1;
    const reason = answer.reason ?? "";
    switch (answer.outcome) {
      case ChargeOutcome.SETTLED:
        await this.book.settle(this.book.db, p.schedule_id, p.period, answer.paymentId ?? answer.receipt?.id ?? "");
        return;
      case ChargeOutcome.FINAL:
        await this.book.lapse(p.schedule_id, p.period, reason || "authorization_unusable");
        return;
      default:
        if (windowClosed) return this.book.lapse(p.schedule_id, p.period, reason || "window_closed");
        if (answer.outcome === ChargeOutcome.RETRYABLE) return this.book.retry(p.schedule_id, p.period, reason || "retryable", wallNow, true);
        // PENDING (sent, not confirmed) and NOT_YET (the chain's clock has not opened the window): ask again soon.
        return this.book.recheck(p.schedule_id, p.period, wallNow);
    }
  }
}
