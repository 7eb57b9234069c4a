import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { outboxRow, type OutboxRow } from "@c402/bus";
import { EVENT_TYPES, paymentEventsV1, TOPICS } from "@c402/contracts";
import { formatUsd } from "@c402/money";
import type { PaymentRow } from "../store/payments-store";

/**
 * The outbox row of `payment.settled` for a settled payment, to be written in
 * the statement that records the settlement. `reusableCheckout`: the checkout
 * keeps selling after this sale (consumers that close single-shot checkouts
 * skip the event).
 */
export function paymentSettledEvent(p: PaymentRow, reusableCheckout: boolean): OutboxRow {
  const event = create(paymentEventsV1.PaymentSettledSchema, {
    paymentId: p.id,
    checkoutId: p.checkout_id,
    title: p.checkout_title,
    network: p.network,
    asset: "USDC",
    amountUsd: formatUsd(p.price_atomic),
    providerAmount: p.provider_amount,
    ...(p.platform_amount !== null ? { platformAmount: p.platform_amount } : {}),
    feeAmount: p.fee_amount,
    total: p.total,
    payer: p.payer,
    payTo: p.pay_to,
    txHash: p.tx_hash ?? "",
    subject: p.subject,
    ...(p.handoff_id !== null ? { handoffId: p.handoff_id } : {}),
    ...(p.sold_by !== null ? { soldBy: p.sold_by } : {}),
    testMode: p.test_mode,
    reusableCheckout,
    settledAt: timestampFromDate(p.settled_at ?? new Date()),
  });
  return outboxRow({
    topic: TOPICS.paymentSettled,
    type: EVENT_TYPES.paymentSettled,
    accountId: p.account_id,
    testMode: p.test_mode,
    aggregateId: p.id,
    payload: toBinary(paymentEventsV1.PaymentSettledSchema, event),
  });
}
