import { timestampDate } from "@bufbuild/protobuf/wkt";
import { escrowV1 } from "@c402/contracts";

/** The spec's escrow state names, by the wire's enum. */
const STATE_NAMES: Record<escrowV1.EscrowState, string | null> = {
  [escrowV1.EscrowState.UNSPECIFIED]: null,
  [escrowV1.EscrowState.HELD]: "held",
  [escrowV1.EscrowState.ON_HOLD]: "on_hold",
  [escrowV1.EscrowState.ESCALATED]: "escalated",
  [escrowV1.EscrowState.RELEASED]: "released",
  [escrowV1.EscrowState.REFUNDED]: "refunded",
};

/** GET /e/{id}/status?payment_id=: where a buyer's escrow stands, and the sentence on what happens next. */
export function escrowStatusView(e: escrowV1.Escrow, receiptUrl: string) {
  const state = STATE_NAMES[e.state];
  return {
    object: "escrow_status",
    payment_id: e.paymentId,
    checkout_id: e.checkoutId,
    network: e.network,
    state,
    next_step: e.nextStep,
    deadline: e.deadline ? timestampDate(e.deadline).toISOString() : null,
    // The receipt exists once the escrow released the payment to the seller.
    receipt_url: state === "released" ? receiptUrl : null,
    test_mode: e.testMode,
  };
}
