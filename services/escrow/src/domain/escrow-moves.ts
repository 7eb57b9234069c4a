import { enqueueOutboxRow } from "@c402/bus";
import { ESCROW_CAUSE } from "@c402/evm-contracts";
import type { EscrowLog } from "../chain/escrow-chain";
import { escrowEventRow, type ArbiterReadinessFacts, type EscrowFacts } from "../events/escrow-events";
import { escrowsStore, type EscrowDb, type EscrowRow, type EscrowRowState } from "../store/escrow-store";
import { deadlineOf, type EscrowClock, type EscrowState, type EscrowTrigger } from "./transitions";
import type { TermsPreset } from "./windows";

/**
 * One change of an escrow's state and the event it publishes: what a contract
 * log says happened (live escrows: the chain is the truth, whoever sent the
 * transaction), or what the rules decide for a test escrow. Applied with a
 * guard on the state it moves from, so a log seen twice (the reader and the
 * sender's receipt, a replayed block range) moves it, and publishes, once.
 */
export interface Move {
  from: readonly EscrowRowState[];
  to: EscrowRowState;
  set: Partial<EscrowRow>;
  event: "escrow.held" | "escrow.on_hold" | "escrow.escalated" | "escrow.released" | "escrow.refunded";
  txHash: string;
  /** What closed it (released and refunded). */
  by?: string;
}

const at = (seconds: bigint) => new Date(Number(seconds) * 1000);

/** What closed an escrow, by the contract's cause and the state it left (the settle window's end or, after a hold, the hold window's). */
function closedBy(cause: number, from: EscrowRowState): string {
  switch (cause) {
    case ESCROW_CAUSE.approved:
      return "approve";
    case ESCROW_CAUSE.settle_window_ended:
      return from === "on_hold" ? "hold_window" : "settle_window";
    case ESCROW_CAUSE.ruling:
      return "ruling";
    case ESCROW_CAUSE.cancelled:
      return "cancel";
    default:
      return "backstop";
  }
}

/** The move a contract log makes on the escrow row (blockTime: the log's block timestamp), or undefined for a log that moves nothing here. */
export function moveOfLog(log: EscrowLog, row: EscrowRow, blockTime: bigint): Move | undefined {
  const txHash = log.transactionHash.toLowerCase();
  switch (log.eventName) {
    case "Deposited": {
      const depositedAt = at(blockTime);
      return {
        from: ["depositing"],
        to: "held",
        set: { deposited_at: depositedAt, deposit_tx_hash: txHash, deadline_at: new Date(depositedAt.getTime() + row.settle_seconds * 1000) },
        event: "escrow.held",
        txHash,
      };
    }
    case "OnHold":
      return { from: ["held"], to: "on_hold", set: { on_hold_at: at(log.args.heldAt), deadline_at: at(log.args.releaseAt) }, event: "escrow.on_hold", txHash };
    case "Escalated":
      return {
        from: ["held", "on_hold"],
        to: "escalated",
        set: { escalated_at: at(log.args.escalatedAt), deadline_at: at(log.args.backstopAt) },
        event: "escrow.escalated",
        txHash,
      };
    case "Released":
    case "Refunded": {
      const by = closedBy(log.args.cause, row.state);
      return {
        from: ["held", "on_hold", "escalated"],
        to: log.eventName === "Released" ? "released" : "refunded",
        set: { closed_at: at(blockTime), close_tx_hash: txHash, closed_by: by, deadline_at: null },
        event: log.eventName === "Released" ? "escrow.released" : "escrow.refunded",
        txHash,
        by,
      };
    }
    default:
      return undefined;
  }
}

/** What closed_by a test escrow's trigger names. */
const TRIGGER_CLOSED_BY: Partial<Record<EscrowTrigger, string>> = {
  approve: "approve",
  cancel: "cancel",
  rule_to_seller: "ruling",
  rule_to_buyer: "ruling",
  settle_window_end: "settle_window",
  hold_window_end: "hold_window",
  backstop_end: "backstop",
};

/** The move a decided trigger makes on a test escrow at `now` (no chain: the rules are applied as the contract would). */
export function moveOfTrigger(row: EscrowRow, trigger: EscrowTrigger, to: EscrowState, now: Date): Move {
  const event = `escrow.${to}` as Move["event"];
  const from: EscrowRowState[] = [row.state];
  switch (to) {
    case "on_hold": {
      const next = { ...clockOf(row), state: to, onHoldAt: now };
      return { from, to, set: { on_hold_at: now, deadline_at: deadlineOf(next) ?? null }, event, txHash: "" };
    }
    case "escalated": {
      const next = { ...clockOf(row), state: to, escalatedAt: now };
      return { from, to, set: { escalated_at: now, deadline_at: deadlineOf(next) ?? null }, event, txHash: "" };
    }
    default: {
      const by = TRIGGER_CLOSED_BY[trigger] ?? trigger;
      return { from, to, set: { closed_at: now, closed_by: by, deadline_at: null }, event, txHash: "", by };
    }
  }
}

/** The clock the rules read of an escrow row (a depositing or failed row has none). */
export function clockOf(row: EscrowRow): EscrowClock {
  return {
    state: row.state as EscrowState,
    depositedAt: row.deposited_at ?? row.created_at,
    onHoldAt: row.on_hold_at,
    escalatedAt: row.escalated_at,
    windows: { settleSeconds: row.settle_seconds, holdSeconds: row.hold_seconds, backstopSeconds: row.backstop_seconds },
  };
}

export function factsOf(row: EscrowRow): EscrowFacts {
  return {
    paymentId: row.payment_id,
    checkoutId: row.checkout_id,
    accountId: row.account_id,
    state: row.state as EscrowState,
    network: row.network,
    handoffId: row.handoff_id,
    preset: row.preset as TermsPreset,
    settleSeconds: row.settle_seconds,
    holdSeconds: row.hold_seconds,
    backstopSeconds: row.backstop_seconds,
    arbiter: row.arbiter,
    payer: row.payer,
    total: BigInt(row.total),
    depositedAt: row.deposited_at ?? row.created_at,
    deadline: row.deadline_at,
    testMode: row.test_mode,
  };
}

/**
 * Applies a move in the caller's transaction: the row moves only from a state the move names, and
 * then (only then) its event is written to the outbox. Answers the moved row, or undefined when the
 * escrow was elsewhere already (the move was applied before).
 */
export async function applyMove(trx: EscrowDb, row: EscrowRow, move: Move, readiness?: ArbiterReadinessFacts): Promise<EscrowRow | undefined> {
  const moved = await escrowsStore.advance(trx, row.payment_id, move.from, { ...move.set, state: move.to });
  if (!moved) return undefined;
  await enqueueOutboxRow(
    trx,
    escrowEventRow(move.event, factsOf(moved), {
      txHash: move.txHash,
      ...(move.by !== undefined ? { by: move.by } : {}),
      ...(readiness ? { arbiterReadiness: readiness } : {}),
    }),
  );
  return moved;
}
