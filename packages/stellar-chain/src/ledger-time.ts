/** The latest closed ledger as the RPC reports it, and when it closed (unix seconds) where the RPC says. */
export interface ClosedLedger {
  sequence: number;
  closeTime?: number;
}

/**
 * The latest time (unix ms) a transaction can be sent and still land by
 * ledger `ledger`: when the ledger before it closes, at the earliest. That is
 * the latest closed ledger's close time plus `ledgerSeconds` (the shortest a
 * ledger takes) for each ledger in between; a latest ledger whose close time
 * is unknown counts as closed a ledger before `now` (unix ms). A ledger
 * already closed, or the next one, answers a time already past.
 */
export function sendByTime(latest: ClosedLedger, ledger: number, ledgerSeconds: number, now: number): number {
  const ledgerMs = ledgerSeconds * 1000;
  const closedAt = latest.closeTime !== undefined ? latest.closeTime * 1000 : now - ledgerMs;
  return closedAt + (ledger - 1 - latest.sequence) * ledgerMs;
}
