import { ORIGIN_HOP_MARGIN_MS } from "@c402/contracts";

/**
 * A call of a seller's origin inside a caller's deadline (ADR 9,
 * "Deadlines"): the origin's own timeout fires first, with the hop back kept,
 * so the caller hears the origin's outcome instead of giving up on us.
 */

/** Kept for the caller to hand an answer on after it arrives (the gateway writing the buyer's response). */
const HAND_ON_MARGIN_MS = 1_000;

/** The origin's time: `wantedMs`, cut so that its outcome reaches a caller waiting until `answerBy` (no deadline: `wantedMs`). */
export function originTimeFor(answerBy: Date | undefined, wantedMs: number, now = Date.now()): number {
  if (!answerBy) return wantedMs;
  return Math.max(1, Math.min(wantedMs, Math.floor(answerBy.getTime() - now - ORIGIN_HOP_MARGIN_MS)));
}

/** Whether an answer ready now still reaches a caller waiting until `answerBy`. */
export function callerStillWaits(answerBy: Date | undefined, now = Date.now()): boolean {
  return !answerBy || now + HAND_ON_MARGIN_MS < answerBy.getTime();
}
