import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { outboxRow, type OutboxRow } from "@c402/bus";
import { EVENT_TYPES, escrowEventsV1, TOPICS } from "@c402/contracts";
import type { EscrowEventName, EscrowState } from "../domain/transitions";
import type { TermsPreset } from "../domain/windows";

/** An escrow as its events describe it (after the change). */
export interface EscrowFacts {
  paymentId: string;
  checkoutId: string;
  accountId: string;
  state: EscrowState;
  network: string;
  handoffId: string | null;
  preset: TermsPreset;
  settleSeconds: number;
  holdSeconds: number;
  backstopSeconds: number;
  arbiter: string;
  payer: string;
  total: bigint;
  depositedAt: Date;
  /** When the next timed exit opens; null in a final state. */
  deadline: Date | null;
  testMode: boolean;
}

export interface ArbiterReadinessFacts {
  arbiter: string;
  family: "evm" | "svm";
  gasBalance: bigint | null;
  rulingsAffordable: number | null;
  note: string;
}

/** What one event adds to the escrow: the transaction, what released or refunded it, the arbiter's readiness (escalated). */
export interface EscrowEventExtras {
  txHash: string;
  by?: string;
  arbiterReadiness?: ArbiterReadinessFacts;
}

function snapshot(e: EscrowFacts): escrowEventsV1.EscrowSnapshot {
  return create(escrowEventsV1.EscrowSnapshotSchema, {
    paymentId: e.paymentId,
    checkoutId: e.checkoutId,
    accountId: e.accountId,
    state: e.state,
    network: e.network,
    ...(e.handoffId !== null ? { handoffId: e.handoffId } : {}),
    preset: e.preset,
    settleSeconds: e.settleSeconds,
    holdSeconds: e.holdSeconds,
    backstopSeconds: e.backstopSeconds,
    arbiter: e.arbiter,
    payer: e.payer,
    total: e.total,
    depositedAt: timestampFromDate(e.depositedAt),
    ...(e.deadline ? { deadline: timestampFromDate(e.deadline) } : {}),
    testMode: e.testMode,
  });
}

function payloadOf(name: Exclude<EscrowEventName, "checkout.paid">, e: EscrowFacts, x: EscrowEventExtras): Uint8Array {
  const escrow = snapshot(e);
  switch (name) {
    case "escrow.held":
      return toBinary(escrowEventsV1.EscrowHeldSchema, create(escrowEventsV1.EscrowHeldSchema, { escrow, txHash: x.txHash }));
    case "escrow.on_hold":
      return toBinary(escrowEventsV1.EscrowOnHoldSchema, create(escrowEventsV1.EscrowOnHoldSchema, { escrow, txHash: x.txHash }));
    case "escrow.escalated": {
      const r = x.arbiterReadiness;
      if (!r) throw new Error("escrow.escalated carries the arbiter's readiness");
      const arbiterReadiness = create(escrowEventsV1.ArbiterReadinessSchema, {
        arbiter: r.arbiter,
        family: r.family,
        ...(r.gasBalance !== null ? { gasBalance: r.gasBalance.toString() } : {}),
        ...(r.rulingsAffordable !== null ? { rulingsAffordable: r.rulingsAffordable } : {}),
        note: r.note,
      });
      return toBinary(escrowEventsV1.EscrowEscalatedSchema, create(escrowEventsV1.EscrowEscalatedSchema, { escrow, txHash: x.txHash, arbiterReadiness }));
    }
    case "escrow.released":
      return toBinary(escrowEventsV1.EscrowReleasedSchema, create(escrowEventsV1.EscrowReleasedSchema, { escrow, txHash: x.txHash, by: x.by ?? "" }));
    case "escrow.refunded":
      return toBinary(escrowEventsV1.EscrowRefundedSchema, create(escrowEventsV1.EscrowRefundedSchema, { escrow, txHash: x.txHash, by: x.by ?? "" }));
  }
}

const TYPE: Record<Exclude<EscrowEventName, "checkout.paid">, string> = {
  "escrow.held": EVENT_TYPES.escrowHeld,
  "escrow.on_hold": EVENT_TYPES.escrowOnHold,
  "escrow.escalated": EVENT_TYPES.escrowEscalated,
  "escrow.released": EVENT_TYPES.escrowReleased,
  "escrow.refunded": EVENT_TYPES.escrowRefunded,
};

/**
 * The outbox row of an escrow event, to be written in the transaction that
 * records the change: on the escrow topic, keyed by the payment id (one
 * escrow's events in order). `checkout.paid` at release is payments'
 * (payment.settled), not built here.
 */
export function escrowEventRow(name: Exclude<EscrowEventName, "checkout.paid">, escrow: EscrowFacts, extras: EscrowEventExtras, at?: Date): OutboxRow {
  return outboxRow({
    topic: TOPICS.escrowEvents,
    type: TYPE[name],
    accountId: escrow.accountId,
    testMode: escrow.testMode,
    aggregateId: escrow.paymentId,
    payload: payloadOf(name, escrow, extras),
    ...(at ? { occurredAt: at } : {}),
  });
}
