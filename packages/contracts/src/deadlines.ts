/**
 * The deadlines the services agree on for a call of a seller's origin (ADR 9,
 * "Deadlines"), ordered so that the origin's own timeout always fires first:
 * the buyer then gets, in the same answer, the goods with the receipt or a
 * 502 `upstream-failed` with nothing charged, never a timeout of ours while
 * the sale goes on behind it.
 *
 *   origin (≤ ORIGIN_TIMEOUT_MAX_MS)
 *     < fulfillment's answer (+ ORIGIN_HOP_MARGIN_MS)
 *     < the gateway's wait for a package call or an article read (ORIGIN_CALL_TIMEOUT_MS)
 *   origin + settlement wait + margins
 *     < the gateway's wait for a paid request (PAID_REQUEST_TIMEOUT_MS)
 */

/** The longest a seller's origin (or MCP server) may take for one call, whatever else allows. */
export const ORIGIN_TIMEOUT_MAX_MS = 30_000;

/** Kept after the origin's deadline for fulfillment's own bookkeeping and the answer's way back. */
export const ORIGIN_HOP_MARGIN_MS = 5_000;

/** The longest one look at a seller's MCP server's tools may take (the handshake and every page), outside any sale. */
export const MCP_TOOLS_LISTING_TIMEOUT_MS = 10_000;

/** How long the gateway waits for a call that calls an origin once and settles nothing (a package call, an article read). */
export const ORIGIN_CALL_TIMEOUT_MS = ORIGIN_TIMEOUT_MAX_MS + ORIGIN_HOP_MARGIN_MS;

/**
 * How long the gateway waits for a paid request (verification, the origin's
 * call, the settlement wait): payments fits the origin's time and its own
 * wait inside what the caller gives, and never settles a payment after this
 * long (its buyer has been answered by then).
 */
export const PAID_REQUEST_TIMEOUT_MS = 60_000;

/**
 * How long payments waits for the escrow service's Deposit (an escrow sale's settlement, ADR 19). The
 * escrow service waits for the deposit's receipt only until shortly before its caller's deadline and
 * then answers pending, so the buyer is told pending (never a reason to pay again), not a timeout.
 */
export const ESCROW_DEPOSIT_TIMEOUT_MS = 20_000;
