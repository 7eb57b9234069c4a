import { timestampDate } from "@bufbuild/protobuf/wkt";
import { idempotentConsumer, type Bus, type Subscription } from "@c402/bus";
import { TOPICS } from "@c402/contracts";
import type { Kysely } from "kysely";
import { webhooksStore, type WebhooksDb } from "../store/webhooks-store";

export const PAYMENT_SETTLED_CONSUMER = "webhooks.payment-settled";

/**
 * Records every `payment.settled` once (dedupe on the event id) as the
 * source of the seller's `checkout.paid` deliveries.
 */
export function subscribePaymentSettled(bus: Bus, db: Kysely<any>): Promise<Subscription> {
  return bus.subscribe({
    topic: TOPICS.paymentSettled,
    group: PAYMENT_SETTLED_CONSUMER,
    handler: idempotentConsumer(db, PAYMENT_SETTLED_CONSUMER, async (trx, envelope) => {
      await webhooksStore.record(trx as WebhooksDb, {
        event_id: envelope.eventId,
        type: envelope.type,
        account_id: envelope.accountId,
        aggregate_id: envelope.aggregateId,
        test_mode: envelope.testMode,
        payload: envelope.payload,
        occurred_at: envelope.occurredAt ? timestampDate(envelope.occurredAt) : new Date(),
      });
    }),
  });
}
