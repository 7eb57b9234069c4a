import { authorizationMessage, paymentsV1, requirementMessage, settleResponseMessage, supportedMessage, verifyResponseMessage } from "@c402/contracts";
import { actorOfRequest } from "@c402/account-events";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { invalid, ProblemError } from "@c402/problems";
import { answered, type ServiceImplementation } from "@c402/rpc";
import { FAMILIES, type Facilitator, type Family } from "../domain/facilitator";
import { deliveryMessage, receiptMessage } from "../domain/payment-wire";
import { issuedPackageMessage } from "./package-issuer";
import type { Payments, SalesSums, SubmitResult } from "../domain/payments";
import type { Face } from "../domain/requirements";
import type { PayoutAccounts } from "../domain/payout-accounts";
import type { ScheduleSummary } from "../domain/series";
import type { ChargeResult, SeriesCharges } from "../domain/series-charges";

function faceOf(face: paymentsV1.Face): Face {
  if (face === paymentsV1.Face.LIVE) return "live";
  if (face === paymentsV1.Face.TEST) return "test";
  throw new ProblemError("bad-request", "face is required");
}

function familyOf(family: string): Family {
  if (!(FAMILIES as readonly string[]).includes(family)) throw new ProblemError("not-found", "No such facilitator family.");
  return family as Family;
}

function jsonOf(text: string, field: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ProblemError("invalid-request", { message: "Invalid JSON.", errors: [{ field, reason: "must be a JSON object" }] });
  }
}

export function paymentsRpc(
  payments: Payments,
  facilitator: Facilitator,
  payoutAccounts: PayoutAccounts,
  series: SeriesCharges,
): ServiceImplementation<typeof paymentsV1.PaymentsService> {
  return {
    async chargeHeldPeriod(req) {
      const r = await series.charge(req.scheduleId, req.period);
      return {
        outcome: CHARGE_OUTCOME[r.outcome],
        ...(r.row ? { paymentId: r.row.id } : {}),
        ...(r.row?.status === "settled" ? { receipt: receiptMessage(r.row) } : {}),
        ...(r.row?.tx_hash ? { txHash: r.row.tx_hash } : {}),
        ...(r.reason !== undefined ? { reason: r.reason } : {}),
      };
    },
    async getSeriesStart(req) {
      return { settled: await series.start(req.scheduleId) };
    },
    async cancelHeldAuthorizations(req) {
      const results = await series.cancel(req.scheduleId, req.cancels);
      return {
        results: results.map((c) => ({
          $typeName: "payments.v1.CancelledAuthorization" as const,
          nonce: c.nonce,
          period: c.period,
          status: c.status,
          ...(c.txHash !== undefined ? { txHash: c.txHash } : {}),
          ...(c.reason !== undefined ? { reason: c.reason } : {}),
        })),
      };
    },
    async checkPayoutAccounts(req) {
      const checks = await payoutAccounts.check(req.rails.map(({ chainFamily, address }) => ({ chainFamily, address })));
      return { checks: checks.map((c) => ({ $typeName: "payments.v1.PayoutAccountCheck" as const, ...c })) };
    },
    async facilitatorSupported(req) {
      return supportedMessage(facilitator.supported(familyOf(req.family)));
    },
    async facilitatorVerify(req) {
      const r = await facilitator.verify(familyOf(req.family), req.network, jsonOf(req.requirementJson, "requirement"), jsonOf(req.payloadJson, "payload"));
      return { verifyResponse: verifyResponseMessage(r) };
    },
    async facilitatorSettle(req) {
      const r = await facilitator.settle(familyOf(req.family), req.network, jsonOf(req.requirementJson, "requirement"), jsonOf(req.payloadJson, "payload"));
      return { settleResponse: settleResponseMessage(r) };
    },
    async quotePayment(req) {
      const q = await payments.quote(req.checkoutId, faceOf(req.face));
      return {
        accepts: q.accepts.map(requirementMessage),
        price: {
          price: q.price.price,
          providerAmount: q.price.providerAmount,
          ...(q.price.platformAmount !== null ? { platformAmount: q.price.platformAmount } : {}),
          feeAmount: q.price.feeAmount,
          total: q.price.total,
        },
        settlement: q.settlement === "simulated" ? paymentsV1.SettlementKind.SIMULATED : paymentsV1.SettlementKind.ONCHAIN,
        ...(q.checkout.listing ? { checkout: q.checkout.listing } : {}),
      };
    },
    async preparePayment(req) {
      const p = await payments.prepare(req.checkoutId, faceOf(req.face), {
        payer: req.payer,
        ...(req.network !== undefined ? { network: req.network } : {}),
        params: req.params,
      });
      return {
        network: p.network,
        requirement: requirementMessage(p.requirement),
        ...(p.authorization ? { authorization: authorizationMessage(p.authorization) } : { transaction: p.transaction }),
        ...(p.salt !== undefined ? { escrowSalt: p.salt } : {}),
        schedule: (p.schedule ?? []).map((h) => ({
          $typeName: "payments.v1.HeldPeriod" as const,
          period: h.period,
          authorization: authorizationMessage(h.authorization),
        })),
      };
    },
    async submitPayment(req, ctx) {
      const r = await payments.submit(req.checkoutId, faceOf(req.face), req.paymentHeader, {
        handoffId: req.handoffId ?? null,
        params: req.params,
        heldHeaders: req.heldPaymentHeaders,
        // The caller's deadline: a relay sale fits its origin and its settlement inside it (ADR 9).
        ...(ctx.deadline ? { answerBy: ctx.deadline } : {}),
      });
      const settled = r.status === "settled";
      return {
        ...(settled ? { receipt: receiptMessage(r.receipt) } : {}),
        redelivered: r.redelivered,
        settleResponse: settleResponseMessage(r.settleResponse),
        // The caller that holds this revision of the checkout already has it (ADR 14).
        ...(r.checkout.listing && (r.checkout.revision === undefined || r.checkout.revision !== req.knownCheckoutRevision)
          ? { checkout: r.checkout.listing }
          : {}),
        checkoutRevision: r.checkout.revision ?? "",
        status: PAYMENT_STATUS[r.status],
        paymentId: r.receipt.id,
        txHash: r.receipt.tx_hash ?? "",
        ...(r.delivery ? { delivery: deliveryMessage(r.delivery) } : {}),
        ...(r.package ? { package: issuedPackageMessage(r.package, r.checkout.id, r.receipt.id, r.receipt.test_mode) } : {}),
        ...(r.package?.key !== undefined ? { packageKey: r.package.key } : {}),
        ...(r.schedule ? { schedule: scheduleSummaryMessage(r.schedule) } : {}),
      };
    },
    async listAwaitingFulfilment(req) {
      if ((req.afterSettledAt === undefined) !== (req.afterId === undefined)) throw invalid([{ field: "after", reason: "needs settled_at and id" }]);
      const rows = await payments.awaitingFulfilment(req.accountId, {
        size: req.pageSize,
        ...(req.afterSettledAt && req.afterId ? { after: { settledAt: timestampDate(req.afterSettledAt), id: req.afterId } } : {}),
      });
      return { receipts: rows.map(receiptMessage) };
    },
    async listReceipts(req) {
      if ((req.afterSettledAt === undefined) !== (req.afterId === undefined)) throw invalid([{ field: "after", reason: "needs settled_at and id" }]);
      const rows = await payments.ledger(
        req.accountId,
        {
          testMode: req.testMode,
          ...(req.soldBy !== undefined ? { soldBy: req.soldBy } : {}),
          ...(req.settledFrom ? { from: timestampDate(req.settledFrom) } : {}),
          ...(req.settledTo ? { to: timestampDate(req.settledTo) } : {}),
        },
        {
          size: req.pageSize,
          ...(req.afterSettledAt && req.afterId ? { after: { settledAt: timestampDate(req.afterSettledAt), id: req.afterId } } : {}),
        },
      );
      return { receipts: rows.map(receiptMessage) };
    },
    async salesAnalytics(req) {
      const a = await payments.salesAnalytics(req.accountId, timestampDate(answered(req.since, "since")), req.testMode);
      const sums = (s: SalesSums): paymentsV1.SalesSums => ({ $typeName: "payments.v1.SalesSums", ...s });
      return {
        totals: sums(a.totals),
        days: a.days.map((d) => ({ $typeName: "payments.v1.DaySales" as const, day: d.day, sums: sums(d.sums) })),
        checkouts: a.checkouts.map((c) => ({ $typeName: "payments.v1.CheckoutSales" as const, checkoutId: c.checkoutId, title: c.title, sums: sums(c.sums) })),
        distinctBuyers: a.buyers.distinct,
        returningBuyers: a.buyers.returning,
      };
    },
    async markFulfilled(req) {
      const { row, alreadyFulfilled } = await payments.markFulfilled(req.accountId, req.paymentId, actorOfRequest(req.actor));
      return { receipt: receiptMessage(row), alreadyFulfilled };
    },
    async findHandoff(req) {
      const row = await payments.handoff(req.checkoutId, req.handoffId);
      return { paymentId: row.id, testMode: row.test_mode, escrowHeld: row.status === "held" };
    },
    async findReceiptByTx(req) {
      return { paymentId: await payments.receiptIdByTx(req.txHash) };
    },
    async getReceipt(req) {
      const row = await payments.receipt(req.paymentId);
      if (row.status !== "settled") return { status: paymentsV1.PaymentStatus.PENDING, txHash: row.tx_hash ?? "" };
      return { receipt: receiptMessage(row), status: paymentsV1.PaymentStatus.SETTLED, txHash: row.tx_hash ?? "" };
    },
  };
}

/** A purchase's status as the wire names it. */
const PAYMENT_STATUS: Record<SubmitResult["status"], paymentsV1.PaymentStatus> = {
  settled: paymentsV1.PaymentStatus.SETTLED,
  held: paymentsV1.PaymentStatus.HELD,
  pending: paymentsV1.PaymentStatus.PENDING,
};

/** A held period's charge outcome as the wire names it. */
const CHARGE_OUTCOME: Record<ChargeResult["outcome"], paymentsV1.ChargeOutcome> = {
  settled: paymentsV1.ChargeOutcome.SETTLED,
  pending: paymentsV1.ChargeOutcome.PENDING,
  not_yet: paymentsV1.ChargeOutcome.NOT_YET,
  retryable: paymentsV1.ChargeOutcome.RETRYABLE,
  final: paymentsV1.ChargeOutcome.FINAL,
};

function scheduleSummaryMessage(s: ScheduleSummary): paymentsV1.ScheduleSummary {
  return {
    $typeName: "payments.v1.ScheduleSummary",
    id: s.id,
    periods: s.periods,
    periodsSettled: s.periodsSettled,
    intervalDays: s.intervalDays,
    paidThrough: timestampFromDate(s.paidThrough),
    ...(s.nextChargeAt ? { nextChargeAt: timestampFromDate(s.nextChargeAt) } : {}),
  };
}
