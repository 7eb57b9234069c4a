import { toBinary } from "@bufbuild/protobuf";
import { outboxRow, type OutboxRow } from "@c402/bus";
import { EVENT_TYPES, paymentEventsV1, TOPICS } from "@c402/contracts";
import { paymentSettledMessage } from "../domain/payment-wire";
import type { PaymentRow } from "../store/payments-store";

/**
 * The outbox row of `payment.settled` for a settled payment, to be written in
 * the statement that records the settlement. `reusableCheckout`: the checkout
 * keeps selling after this sale (consumers that close single-shot checkouts
 * skip the event).
 */
export function paymentSettledEvent(p: PaymentRow, reusableCheckout: boolean): OutboxRow {
  return outboxRow({
    topic: TOPICS.paymentSettled,
    type: EVENT_TYPES.paymentSettled,
    accountId: p.account_id,
    testMode: p.test_mode,
    aggregateId: p.id,
    payload: toBinary(paymentEventsV1.PaymentSettledSchema, paymentSettledMessage(p, reusableCheckout)),
  });
}
