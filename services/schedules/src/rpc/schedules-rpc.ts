import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { schedulesV1 } from "@c402/contracts";
import type { ServiceImplementation } from "@c402/rpc";
import { cancelByBuyer, cancellablePeriods, cancelBySeller, cancelMessageOf, type CancelResult } from "../domain/cancels";
import type { PaymentsForSchedules } from "../domain/charge-scheduler";
import type { SeriesBook } from "../domain/series-book";
import type { SeriesView } from "../domain/series-view";
import type { ScheduleStatus } from "../domain/statuses";
import type { PeriodRow } from "../store/schedules-store";

const ts = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

function periodMessage(p: PeriodRow) {
  return {
    period: p.period,
    status: p.status,
    validAfter: timestampFromDate(p.valid_after),
    validBefore: timestampFromDate(p.valid_before),
    nonce: p.nonce ?? "",
    ...(p.payment_id !== null ? { paymentId: p.payment_id } : {}),
    settledAt: ts(p.settled_at),
    attempts: p.attempts,
    ...(p.last_failure !== null ? { lastFailure: p.last_failure } : {}),
    nextAttemptAt: ts(p.next_attempt_at),
    cancelledOnchain: p.cancelled_onchain,
  };
}

function scheduleMessage(s: SeriesView, detail: boolean) {
  return {
    id: s.id,
    url: s.url,
    accountId: s.accountId,
    checkoutId: s.checkoutId,
    status: s.status,
    periods: s.periods,
    periodsSettled: s.periodsSettled,
    paidThrough: ts(s.paidThrough),
    nextChargeAt: ts(s.nextChargeAt),
    intervalDays: s.intervalDays,
    payer: s.payer,
    network: s.network,
    testMode: s.testMode,
    amountUsd: s.amountUsd,
    total: s.total,
    createdAt: timestampFromDate(s.createdAt),
    endedAt: ts(s.endedAt),
    ...(s.cancelledBy !== null ? { cancelledBy: s.cancelledBy } : {}),
    ...(s.cancelReason !== null ? { cancelReason: s.cancelReason } : {}),
    periodsDetail: detail ? s.periodsDetail.map(periodMessage) : [],
  };
}

function cancelAnswer(r: CancelResult) {
  return {
    schedule: scheduleMessage(r.series, true),
    alreadyEnded: r.alreadyEnded,
    onchain: r.onchain.map((o) => ({ nonce: o.nonce, period: o.period, status: o.status, txHash: o.txHash, reason: o.reason })),
    note: r.note,
  };
}

/** Thin handlers: the rules are the domain's (domain/). */
export function schedulesRpc(book: SeriesBook, payments: PaymentsForSchedules): ServiceImplementation<typeof schedulesV1.SchedulesService> {
  return {
    async getSchedule(req) {
      return { schedule: scheduleMessage(await book.view(req.scheduleId, req.accountId), true) };
    },
    async listSchedules(req) {
      const list = await book.list({
        accountId: req.accountId,
        testMode: req.testMode,
        limit: req.pageSize,
        ...(req.checkoutId !== undefined ? { checkoutId: req.checkoutId } : {}),
        ...(req.status !== undefined ? { status: req.status as ScheduleStatus } : {}),
        ...(req.afterCreatedAt && req.afterId !== undefined ? { after: { createdAt: timestampDate(req.afterCreatedAt), id: req.afterId } } : {}),
      });
      return { schedules: list.map((s) => scheduleMessage(s, false)) };
    },
    async cancelSchedule(req) {
      const r = await cancelBySeller(book, req.accountId, req.scheduleId, req.reason);
      return { schedule: scheduleMessage(r.series, true), alreadyEnded: r.alreadyEnded };
    },
    async getBuyerView(req) {
      const series = await book.view(req.scheduleId);
      return { schedule: scheduleMessage(series, true), cancelMessage: cancelMessageOf(series), cancellable: cancellablePeriods(series).map(periodMessage) };
    },
    async cancelByBuyer(req) {
      // The contract requires one method (buf.validate oneof required) before this runs.
      const method = req.method;
      if (method.case === undefined) throw new Error("CancelByBuyer without a method passed validation");
      const r = await cancelByBuyer(
        book,
        payments,
        req.scheduleId,
        method.case === "authorizations" ? { case: "authorizations", value: method.value } : method,
      );
      return cancelAnswer(r);
    },
  };
}
