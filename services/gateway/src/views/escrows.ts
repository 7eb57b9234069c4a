import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { escrowStatusUrl, escrowV1, receiptUrl } from "@c402/contracts";

/**
 * The escrow answers (GET /v1/escrows, GET /v1/escrows/{payment_id}, the
 * action and ruling answers, and the MCP escrow tools), from the escrow
 * service's messages. Amounts are atomic USDC units as JSON integers, windows
 * are seconds.
 */

const STATE: Record<escrowV1.EscrowState, string | null> = {
  [escrowV1.EscrowState.UNSPECIFIED]: null,
  [escrowV1.EscrowState.HELD]: "held",
  [escrowV1.EscrowState.ON_HOLD]: "on_hold",
  [escrowV1.EscrowState.ESCALATED]: "escalated",
  [escrowV1.EscrowState.RELEASED]: "released",
  [escrowV1.EscrowState.REFUNDED]: "refunded",
};
const PRESET: Record<escrowV1.EscrowPreset, string | null> = {
  [escrowV1.EscrowPreset.UNSPECIFIED]: null,
  [escrowV1.EscrowPreset.INSTANT]: "instant",
  [escrowV1.EscrowPreset.STANDARD]: "standard",
  [escrowV1.EscrowPreset.SHIPPING]: "shipping",
  [escrowV1.EscrowPreset.CUSTOM]: "custom",
};

/** The states GET /v1/escrows filters by (the open ones, as the spec lists them). */
export const ESCROW_LIST_STATES = {
  held: escrowV1.EscrowState.HELD,
  on_hold: escrowV1.EscrowState.ON_HOLD,
  escalated: escrowV1.EscrowState.ESCALATED,
} as const;

/** The actions of /e/{id}/actions/{action}, as the path names them. */
export const ESCROW_ACTIONS = {
  hold: escrowV1.EscrowAction.HOLD,
  approve: escrowV1.EscrowAction.APPROVE,
  "request-refund": escrowV1.EscrowAction.REQUEST_REFUND,
  cancel: escrowV1.EscrowAction.CANCEL,
} as const;
export type EscrowActionName = keyof typeof ESCROW_ACTIONS;

const iso = (t: Timestamp | undefined): string | null => (t ? timestampDate(t).toISOString() : null);
const atomic = (decimal: string | undefined): number => (decimal ? Number(decimal) : 0);

/** What a list shows of an escrow: who, how much, where it stands and what comes next. */
export function escrowSummaryView(e: escrowV1.Escrow, baseUrl: string) {
  const t = e.terms;
  const amount = atomic(t?.amount) + atomic(t?.platformAmount);
  return {
    object: "escrow",
    payment_id: e.paymentId,
    checkout_id: e.checkoutId,
    status: STATE[e.state],
    network: e.network,
    buyer: t?.buyer ?? null,
    total: amount + atomic(t?.fee),
    deadline: iso(e.deadline),
    next_step: e.nextStep,
    test_mode: e.testMode,
    created_at: iso(e.createdAt),
    status_url: escrowStatusUrl(baseUrl, e.checkoutId, e.paymentId),
  };
}

/** One escrow whole: its terms as frozen in the buyer's signature, its moments and its transactions. */
export function escrowView(e: escrowV1.Escrow, baseUrl: string) {
  const t = e.terms;
  const released = e.state === escrowV1.EscrowState.RELEASED;
  return {
    ...escrowSummaryView(e, baseUrl),
    contract: e.contract,
    escrow_id: e.escrowId,
    seller: t?.seller ?? null,
    arbiter: t?.arbiter ?? null,
    amount: atomic(t?.amount),
    platform_amount: atomic(t?.platformAmount),
    fee: atomic(t?.fee),
    preset: t ? PRESET[t.preset] : null,
    settle_window: t?.windows?.settleSeconds ?? null,
    hold_window: t?.windows?.holdSeconds ?? null,
    backstop_window: t?.windows?.backstopSeconds ?? null,
    handoff_id: e.handoffId ?? null,
    deposit_tx_hash: e.depositTxHash ?? null,
    close_tx_hash: e.closeTxHash ?? null,
    closed_by: e.closedBy || null,
    deposited_at: iso(e.depositedAt),
    on_hold_at: iso(e.onHoldAt),
    escalated_at: iso(e.escalatedAt),
    closed_at: iso(e.closedAt),
    gasless: e.gasless,
    receipt_url: released ? receiptUrl(baseUrl, e.paymentId) : null,
  };
}

function transactionView(tx: escrowV1.UnsignedTransaction | undefined) {
  if (!tx) return null;
  return { family: tx.family, network: tx.network, chain_id: Number(tx.chainId), from_: tx.from || null, to: tx.to, data: tx.data, value: tx.value };
}

/** POST /e/{id}/actions/{action}: what to sign, who must sign it, and the two ways to send it. */
export function escrowActionView(action: EscrowActionName, r: escrowV1.PrepareActionResponse, baseUrl: string) {
  const e = r.escrow;
  return {
    object: "escrow_action",
    action,
    payment_id: e?.paymentId ?? null,
    signer: r.signer,
    typed_data: JSON.parse(r.typedDataJson) as unknown,
    deadline: Number(r.deadline),
    transaction: transactionView(r.transaction),
    gasless: r.gasless,
    submit_url: r.gasless && e ? `${baseUrl}/e/${e.checkoutId}/actions/${action}/submit?payment_id=${encodeURIComponent(e.paymentId)}` : null,
    escrow: e ? escrowSummaryView(e, baseUrl) : null,
  };
}

/** POST /e/{id}/actions/{action}/submit: the relayed transaction and the escrow as the chain left it. */
export function escrowSubmitView(r: escrowV1.SubmitActionResponse, baseUrl: string) {
  return {
    object: "escrow_submission",
    tx_hash: r.txHash ?? null,
    pending: r.pending,
    replayed: r.replayed,
    escrow: r.escrow ? escrowSummaryView(r.escrow, baseUrl) : null,
  };
}

/** POST /v1/escrows/{payment_id}/resolve: the unsigned ruling for the arbiter's wallet. */
export function escrowRulingView(toSeller: boolean, r: escrowV1.PrepareRulingResponse, baseUrl: string) {
  return {
    object: "escrow_ruling",
    to_seller: toSeller,
    ...transactionView(r.transaction),
    note: "Sign this transaction with the arbiter wallet named in from_ and broadcast it yourself (it pays its gas). The escrow follows the chain: GET /v1/escrows/{payment_id} shows the outcome once the transaction is mined.",
    escrow: r.escrow ? escrowSummaryView(r.escrow, baseUrl) : null,
  };
}

/** GET /e/{id}/status?payment_id=: where a buyer's escrow stands, and the sentence on what happens next. */
export function escrowStatusView(e: escrowV1.Escrow, baseUrl: string) {
  const state = STATE[e.state];
  return {
    object: "escrow_status",
    payment_id: e.paymentId,
    checkout_id: e.checkoutId,
    network: e.network,
    state,
    next_step: e.nextStep,
    deadline: iso(e.deadline),
    // The receipt exists once the escrow released the payment to the seller.
    receipt_url: state === "released" ? receiptUrl(baseUrl, e.paymentId) : null,
    test_mode: e.testMode,
  };
}
