import { fromBinary } from "@bufbuild/protobuf";
import { idempotentConsumer, type Bus, type Subscription } from "@c402/bus";
import { paymentEventsV1, TOPICS } from "@c402/contracts";
import type { Kysely } from "kysely";
import { catalogStore, type CatalogDb } from "../store/catalog-store";

export const CATALOG_PAYMENT_CONSUMER = "catalog.payment-settled";

/**
 * A settled live payment closes a single-shot checkout (`paid`); rehearsals and
 * sales of reusable checkouts never change status, so they are skipped outright.
 */
export function subscribePaymentSettled(bus: Bus, db: Kysely<unknown>): Promise<Subscription> {
  return bus.subscribe({
    topic: TOPICS.paymentSettled,
    group: CATALOG_PAYMENT_CONSUMER,
    handler: idempotentConsumer(
      db,
      CATALOG_PAYMENT_CONSUMER,
      async (trx, envelope) => {
        const event = fromBinary(paymentEventsV1.PaymentSettledSchema, envelope.payload);
        await catalogStore.markPaid(trx as CatalogDb, event.checkoutId);
      },
      { ignore: (envelope) => envelope.testMode || fromBinary(paymentEventsV1.PaymentSettledSchema, envelope.payload).reusableCheckout },
    ),
  });
}
