import type { paymentsV1, schedulesV1 } from "@c402/contracts";
import { cancelAuthorizationTypedData, EVM_NETWORKS, isEvmNetwork, preparedPayment, REHEARSAL_DOMAIN, REHEARSAL_NETWORK, REHEARSAL_TOKEN } from "@c402/x402";
import type { Eip712Domain, ExactEvmAuthorization, PaymentRequirements } from "@c402/x402";
import { authorizationFromMessage } from "@c402/contracts";
import { answered } from "@c402/rpc";
import { receiptUrl } from "./receipts";
import { isoOrNull } from "./values";

/**
 * Recurring series (spec, Schedule; ADR 20): the series as the seller routes,
 * the buyer's view and a purchase answer show it, and the held periods'
 * authorizations a prepare answers beside period 0's.
 */

/** The buyer's view of a series: BASE_URL/schedule/{id}. */
export const scheduleUrl = (baseUrl: string, scheduleId: string) => `${baseUrl}/schedule/${scheduleId}`;

/** The schedule statuses a list filters by (docs/decisions.md, Schedule status values). */
export const SCHEDULE_STATUSES = ["active", "completed", "cancelled", "lapsed"] as const;

/** A series as lists show it: the spec's Schedule fields, and what it sells and how. */
export function scheduleSummaryView(s: schedulesV1.Schedule, baseUrl: string) {
  return {
    id: s.id,
    object: "schedule",
    url: scheduleUrl(baseUrl, s.id),
    status: s.status,
    checkout_id: s.checkoutId,
    periods: s.periods,
    periods_settled: s.periodsSettled,
    interval_days: s.intervalDays,
    paid_through: isoOrNull(s.paidThrough),
    next_charge_at: isoOrNull(s.nextChargeAt),
    payer: s.payer,
    network: s.network,
    amount_usd: s.amountUsd,
    total: Number(s.total),
    test_mode: s.testMode,
    created_at: isoOrNull(s.createdAt),
    ended_at: isoOrNull(s.endedAt),
    cancelled_by: s.cancelledBy ?? null,
    cancel_reason: s.cancelReason ?? null,
  };
}

/** One period of a series' detail: its window, its state and, once settled, its receipt. */
function periodView(p: schedulesV1.SchedulePeriod, baseUrl: string) {
  return {
    period: p.period,
    status: p.status,
    valid_after: isoOrNull(p.validAfter),
    valid_before: isoOrNull(p.validBefore),
    payment_id: p.paymentId ?? null,
    receipt_url: p.paymentId !== undefined ? receiptUrl(baseUrl, p.paymentId) : null,
    settled_at: isoOrNull(p.settledAt),
    attempts: p.attempts,
    last_failure: p.lastFailure ?? null,
    next_attempt_at: isoOrNull(p.nextAttemptAt),
    cancelled_onchain: p.cancelledOnchain,
  };
}

/** A series with every period (GET /v1/schedules/{id}). */
export function scheduleView(s: schedulesV1.Schedule, baseUrl: string) {
  return { ...scheduleSummaryView(s, baseUrl), periods_detail: s.periodsDetail.map((p) => periodView(p, baseUrl)) };
}

/**
 * The USDC whose CancelAuthorization a payer signs: the live network's token
 * (EVM_NETWORKS), or for a test-mode series the rehearsal token, under the
 * rehearsal domain every test face signs with.
 */
export function cancelDomainOf(s: Pick<schedulesV1.Schedule, "network" | "testMode">): Eip712Domain | undefined {
  if (s.testMode) {
    return { ...REHEARSAL_DOMAIN, chainId: EVM_NETWORKS[REHEARSAL_NETWORK].chainId, verifyingContract: REHEARSAL_TOKEN.address };
  }
  if (!isEvmNetwork(s.network)) return undefined;
  const n = EVM_NETWORKS[s.network];
  return { name: n.name, version: n.version, chainId: n.chainId, verifyingContract: n.usdc };
}

/**
 * GET /schedule/{id}: the series and how its payer cancels it: sign
 * cancel.message (EIP-191), or one of cancel.onchain's typed data per held
 * period (USDC CancelAuthorization, submitted by the service so no held
 * period can be charged by anyone). cancel is null once the series ended.
 */
export function buyerScheduleView(r: schedulesV1.GetBuyerViewResponse, baseUrl: string) {
  const s = answered(r.schedule, "schedule");
  const domain = cancelDomainOf(s);
  const cancel =
    r.cancelMessage === undefined
      ? null
      : {
          message: r.cancelMessage,
          onchain:
            domain === undefined
              ? []
              : r.cancellable.map((p) => ({
                  period: p.period,
                  nonce: p.nonce,
                  valid_before: isoOrNull(p.validBefore),
                  typed_data: cancelAuthorizationTypedData(domain, s.payer, p.nonce),
                })),
          how: `POST ${scheduleUrl(baseUrl, s.id)}/cancel with {signature} (the payer's personal_sign of message: charging stops; the held authorizations stay valid on chain until their windows end), or {authorizations: [{nonce, signature: {v, r, s}}]} (each onchain typed data signed with eth_signTypedData_v4: the service submits them, and no held period can be charged by anyone)${s.testMode ? ", or {payer} (a test-mode series)" : ""}.`,
        };
  return { ...scheduleView(s, baseUrl), cancel };
}

/** POST /schedule/{id}/cancel: the series after the cancel, what it means, and each on-chain cancel's outcome. */
export function buyerCancelView(r: schedulesV1.CancelByBuyerResponse, baseUrl: string) {
  return {
    schedule: scheduleView(answered(r.schedule, "schedule"), baseUrl),
    already_ended: r.alreadyEnded,
    note: r.note,
    onchain: r.onchain.map((o) => ({ nonce: o.nonce, period: o.period, status: o.status, tx_hash: o.txHash ?? null, reason: o.reason ?? null })),
  };
}

/** POST /v1/schedules/{id}/cancel: the series after the seller's cancel. */
export function sellerCancelView(r: schedulesV1.CancelScheduleResponse, baseUrl: string) {
  return { ...scheduleView(answered(r.schedule, "schedule"), baseUrl), already_ended: r.alreadyEnded };
}

/** The `schedule` object of a settled purchase that started a series (payments' summary at that moment). */
export function purchaseScheduleView(s: paymentsV1.ScheduleSummary, baseUrl: string) {
  return {
    id: s.id,
    url: scheduleUrl(baseUrl, s.id),
    status: "active",
    periods: s.periods,
    periods_settled: s.periodsSettled,
    interval_days: s.intervalDays,
    paid_through: isoOrNull(s.paidThrough),
    next_charge_at: isoOrNull(s.nextChargeAt),
  };
}

/** unix seconds of an authorization's bound as the API shows it (a number, as EIP-3009 counts it). */
const unixSeconds = (v: string) => Number(v);

/**
 * A prepare's held periods (`schedule[]`): each period's authorization
 * rendered as period 0's (preparedPayment, the same requirement), with its
 * window as unix seconds; both ends exclusive, as EIP-3009 counts them.
 */
export function preparedScheduleView(held: readonly paymentsV1.HeldPeriod[], requirement: PaymentRequirements, resourceUrl: string) {
  return held.map((h) => {
    const authorization: ExactEvmAuthorization = authorizationFromMessage(answered(h.authorization, "authorization"));
    const { typedData, payloadStub } = preparedPayment(requirement, authorization, resourceUrl);
    return {
      period: h.period,
      valid_after: unixSeconds(authorization.validAfter),
      valid_before: unixSeconds(authorization.validBefore),
      typed_data: typedData,
      payload_stub: payloadStub,
    };
  });
}
