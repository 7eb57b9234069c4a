import { invalid, ProblemError, type FieldError } from "@c402/problems";

/**
 * Escrow checkouts (spec, Escrow; ADR 19). The terms come resolved by the
 * escrow service (preset, windows, arbiter per chain family: explicit, the
 * account's settings, the service default); catalog freezes them and applies
 * the rules that need the checkout itself: what an escrow checkout may sell,
 * and that its EVM arbiter is neither missing nor the seller's own wallet.
 */

/** An escrow checkout's terms as stored (seconds; arbiters as the escrow service answered them). */
export interface EscrowTerms {
  preset: string;
  settle_seconds: number;
  hold_seconds: number;
  backstop_seconds: number;
  /** The Base arbiter; every escrow checkout has one (a chain with no arbiter offers no escrow rail, and escrow is Base only). */
  arbiter_evm: string;
  /** Kept as resolved, though no Solana escrow rail is offered (ADR 19). */
  arbiter_svm: string | null;
}

/** CreateCheckoutRequest's escrow terms as they arrive (catalog.v1.CheckoutEscrow). */
export interface EscrowTermsInput {
  preset: string;
  settleSeconds: number;
  holdSeconds: number;
  backstopSeconds: number;
  arbiterEvm?: string;
  arbiterSvm?: string;
}

const PRESETS = ["instant", "standard", "shipping", "custom"];

/** What an escrow checkout may be sold as: the goods reach the buyer on deposit, inline or from the seller's origin. */
const ESCROW_FULFILLMENTS = ["inline", "relay"];

/** The spec's one 400 for escrow: a gated article is opened by a pass, an escrow holds the money until the buyer accepts. */
export function escrowWithContentRefused(): ProblemError {
  return new ProblemError("bad-request", {
    message: "Escrow and gated content cannot be combined.",
    errors: [{ field: "escrow_offer", reason: "cannot be combined with content" }],
    help: { fix: "Send content (a gated article) or escrow, not both.", retry_is_safe: false },
  });
}

/**
 * The create's escrow side: `escrow` makes it an escrow checkout, `escrowTwin`
 * mints an escrow twin beside a plain one; the terms of either, checked.
 * Pushes a field error for each refusal (the 400 of escrow with content is thrown).
 */
export function escrowOfCreate(
  input: { escrow?: EscrowTermsInput; escrowTwin?: EscrowTermsInput; contentJson?: string },
  mode: string,
  errors: FieldError[],
): { escrow: EscrowTerms | null; escrowTwin: EscrowTerms | null } {
  const sent = input.escrow ?? input.escrowTwin;
  if (sent === undefined) return { escrow: null, escrowTwin: null };
  if (input.contentJson !== undefined) throw escrowWithContentRefused();
  if (input.escrow !== undefined && input.escrowTwin !== undefined) {
    errors.push({ field: "escrow_offer", reason: "an escrow checkout has no escrow twin: send escrow or escrow_twin, not both" });
  }
  if (!ESCROW_FULFILLMENTS.includes(mode)) {
    errors.push({ field: "fulfillment", reason: `must be inline or relay for an escrow checkout (its goods are delivered on deposit), not ${mode}` });
  }
  const terms = escrowTermsOf(sent, errors);
  return input.escrow !== undefined ? { escrow: terms, escrowTwin: null } : { escrow: null, escrowTwin: terms };
}

function escrowTermsOf(t: EscrowTermsInput, errors: FieldError[]): EscrowTerms | null {
  const before = errors.length;
  if (!PRESETS.includes(t.preset)) errors.push({ field: "escrow_preset", reason: `must be one of ${PRESETS.join(", ")}` });
  for (const [field, seconds] of [
    ["escrow_settle_window", t.settleSeconds],
    ["escrow_hold_window", t.holdSeconds],
    ["escrow_backstop_window", t.backstopSeconds],
  ] as const) {
    if (!Number.isInteger(seconds) || seconds <= 0) errors.push({ field, reason: "must be a positive number of seconds" });
  }
  if (t.arbiterEvm === undefined) {
    errors.push({ field: "arbiter_evm", reason: "is required: escrow runs on Base only, and a chain with no arbiter offers no escrow rail" });
  }
  if (errors.length > before || t.arbiterEvm === undefined) return null;
  return {
    preset: t.preset,
    settle_seconds: t.settleSeconds,
    hold_seconds: t.holdSeconds,
    backstop_seconds: t.backstopSeconds,
    arbiter_evm: t.arbiterEvm,
    arbiter_svm: t.arbiterSvm ?? null,
  };
}

/**
 * The escrow contract refuses a seller as its own escrow's arbiter (ADR 18):
 * refused at create, once the checkout's EVM payout wallet (pay_to) is known,
 * rather than at the first deposit.
 */
export function ensureArbiterIsNotSeller(terms: EscrowTerms | null, payTo: string): void {
  if (terms !== null && terms.arbiter_evm.toLowerCase() === payTo.toLowerCase()) {
    throw invalid([
      {
        field: "arbiter_evm",
        reason: "is the checkout's own payout wallet (pay_to): the escrow contract refuses a seller as the arbiter of its own escrows; name another arbiter",
      },
    ]);
  }
}
