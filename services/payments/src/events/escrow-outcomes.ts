import { fromBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { idempotentConsumer, type Bus, type Subscription } from "@c402/bus";
import { escrowEventsV1, EVENT_TYPES, TOPICS } from "@c402/contracts";
import { paymentsStore as store, type PaymentStatus, type PaymentsDb } from "../store/payments-store";
import { paymentSettledEvent } from "./payment-settled";

export const PAYMENTS_ESCROW_CONSUMER = "payments.escrow-outcomes";

/**
 * The saga states an escrow sale's payment may be in when its escrow closes:
 * held, or (a crash or a lost answer between the deposit and its record)
 * still claimed, delivered or depositing: the escrow's event is the truth.
 */
const OPEN: PaymentStatus[] = ["held", "claimed", "delivered", "settling"];

/**
 * How an escrow's close reaches its payment (ADR 19), once per payment: the
 * release settles it (the receipt appears, with the release's transaction,
 * and payment.settled goes out in the same statement, so checkout.paid fires
 * at release, once); the refund marks it refunded (no receipt, ever). A
 * payment already closed is left as it is, so a redelivered event, or a
 * second event for one escrow, changes nothing. Answers whether it moved.
 */
export async function applyEscrowOutcome(db: PaymentsDb, type: string, payload: Uint8Array, occurredAt: Date): Promise<boolean> {
  if (type === EVENT_TYPES.escrowReleased) {
    const event = fromBinary(escrowEventsV1.EscrowReleasedSchema, payload);
    const row = event.escrow && (await store.findById(db, event.escrow.paymentId));
    if (!row || !OPEN.includes(row.status)) return false;
    const set = { tx_hash: event.txHash === "" ? row.tx_hash : event.txHash, settled_at: occurredAt };
    // A live row is single-shot exactly when its checkout is not reusable (see claimPayment).
    const settled = await store.settleWithEvent(db, row.id, OPEN, set, paymentSettledEvent({ ...row, ...set, status: "settled" }, !row.single_shot));
    return settled !== undefined;
  }
  if (type === EVENT_TYPES.escrowRefunded) {
    const event = fromBinary(escrowEventsV1.EscrowRefundedSchema, payload);
    if (!event.escrow) return false;
    return (
      (await store.advance(db, event.escrow.paymentId, OPEN, { status: "refunded", failure_reason: `escrow_refunded_by_${event.by || "unknown"}` })) !==
      undefined
    );
  }
  return false;
}

/** Payments' consumer of the escrow events: only escrow.released and escrow.refunded move a payment. */
export function subscribeEscrowOutcomes(bus: Bus, db: PaymentsDb, onCommitted: () => void): Promise<Subscription> {
  const moves = new Set<string>([EVENT_TYPES.escrowReleased, EVENT_TYPES.escrowRefunded]);
  const apply = idempotentConsumer(
    db,
    PAYMENTS_ESCROW_CONSUMER,
    async (trx, envelope) => {
      await applyEscrowOutcome(trx as PaymentsDb, envelope.type, envelope.payload, envelope.occurredAt ? timestampDate(envelope.occurredAt) : new Date());
    },
    { ignore: (envelope) => !moves.has(envelope.type) },
  );
  return bus.subscribe({
    topic: TOPICS.escrowEvents,
    group: PAYMENTS_ESCROW_CONSUMER,
    // After the commit: a release wrote payment.settled to the outbox (the relay also finds it on its own round).
    handler: async (message) => {
      await apply(message);
      onCommitted();
    },
  });
}
