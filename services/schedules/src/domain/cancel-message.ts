/**
 * The text the payer signs (EIP-191, personal_sign) to cancel a series: it
 * names the series, its checkout and its payer, so a signature cancels only
 * the series it was made for, and says what it does.
 */
export function cancelMessage(s: { id: string; checkoutId: string; payer: string }): string {
  return [`Cancel c402 series ${s.id}`, `Checkout: ${s.checkoutId}`, `Payer: ${s.payer}`, "No further period of this series will be charged."].join("\n");
}

/** What each way of cancelling means for the held authorizations (CancelByBuyerResponse.note). */
export const CANCEL_NOTES = {
  signature:
    "The series is cancelled: this service will not submit any further period. The held authorizations stay valid on chain until their windows end; cancel them on chain (cancellable periods) so no one can submit them.",
  onchain: "The held authorizations cancelled on chain can never be charged by anyone; their periods will not be charged.",
  onchainPartly:
    "The series is cancelled: this service will not submit any further period. Some held authorizations are not cancelled on chain (see onchain) and stay valid until their windows end.",
  payer: "The test-mode series is cancelled: no further period will be charged.",
  alreadyEnded: "The series had already ended; nothing changed.",
} as const;
