import { timestampDate } from "@bufbuild/protobuf/wkt";
import { decodeEnvelope, type Bus, type Subscription } from "@c402/bus";
import { TOPICS } from "@c402/contracts";
import type { Kysely } from "kysely";
import { webhooksStore, type WebhooksDb } from "../store/webhooks-store";

export const PAYMENT_SETTLED_CONSUMER = "webhooks.payment-settled";

/**
 * Records every `payment.settled` once as the source of the seller's
 * `checkout.paid` deliveries. The record is keyed by the event id, so the one
 * insert is its own dedupe: a redelivered event inserts nothing, and no
 * processed-event row or transaction is needed.
 */
export function subscribePaymentSettled(bus: Bus, db: Kysely<unknown>): Promise<Subscription> {
  return bus.subscribe({
    topic: TOPICS.paymentSettled,
    group: PAYMENT_SETTLED_CONSUMER,
    handler: async (message) => {
      const envelope = decodeEnvelope(message.value);
      await webhooksStore.recordOnce(db as WebhooksDb, {
        event_id: envelope.eventId,
        type: envelope.type,
        account_id: envelope.accountId,
        aggregate_id: envelope.aggregateId,
        test_mode: envelope.testMode,
        payload: envelope.payload,
        occurred_at: envelope.occurredAt ? timestampDate(envelope.occurredAt) : new Date(),
      });
    },
  });
}
