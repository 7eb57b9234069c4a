import { deadlineOf, type EscrowClock } from "./transitions";

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** A moment as the sentences write it, in UTC to the minute: "10 December 2026 at 09:30 UTC". */
export function sentenceDate(at: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${at.getUTCFullYear()} at ${two(at.getUTCHours())}:${two(at.getUTCMinutes())} UTC`;
}

/**
 * What happens next to an escrow, in one sentence for a buyer or a seller
 * (GET /e/{id}/status, the 402's `extra.escrow`): what happens if nobody
 * acts, and when; or, once a window ended, that anyone may now take the
 * exit; or, in a final state, where the money went.
 */
export function nextStep(escrow: EscrowClock, now: Date): string {
  const deadline = deadlineOf(escrow);
  const passed = deadline !== undefined && now.getTime() >= deadline.getTime();
  switch (escrow.state) {
    case "held":
      return passed
        ? "The release window has ended: anyone may now release the payment to the seller."
        : `If nobody acts, the payment is released to the seller on ${sentenceDate(deadline as Date)}.`;
    case "on_hold":
      return passed
        ? "The buyer's hold has ended: anyone may now release the payment to the seller."
        : `The buyer paused the automatic release; if nobody acts, the payment is released to the seller on ${sentenceDate(deadline as Date)}.`;
    case "escalated":
      return passed
        ? "The arbiter did not rule in time: anyone may now refund the payment to the buyer."
        : `The arbiter is asked to rule; without a ruling, the payment is refunded to the buyer on ${sentenceDate(deadline as Date)}.`;
    case "released":
      return "The payment was released to the seller; nothing more happens.";
    case "refunded":
      return "The payment was refunded to the buyer; nothing more happens.";
  }
}

/**
 * The sentence of an escrow not yet paid for (the 402's `extra.escrow`): what
 * happens to a deposit made now if nobody acts.
 */
export function nextStepBeforeDeposit(settleSeconds: number, now: Date): string {
  return `If nobody acts, the payment is released to the seller on ${sentenceDate(new Date(now.getTime() + settleSeconds * 1000))}.`;
}
