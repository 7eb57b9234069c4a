import type { SupportedKinds } from "@c402/contracts";
import { isCheckoutId } from "@c402/ids";
import { ProblemError } from "@c402/problems";
import {
  acceptedMatches,
  parsePaymentPayload,
  parseRequirements,
  PaymentHeaderError,
  v1NetworkName,
  type AnyPaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
  type VerifyResponse,
} from "@c402/x402";
import { settleResponseOf } from "./payment-wire";
import type { CheckoutSource } from "./payments";
import { requirementsFor, sellingRefusal, settlementKindOf, type CheckoutForPayment } from "./requirements";
import { settlementOf, type RailFamily, type Settlement } from "./settlement/settlement";

/**
 * The public x402 facilitator per chain family, with the reference
 * facilitator's answers (`isValid: false`, `success: false` with a reason;
 * never an HTTP error for a refused payment). Unlike the reference, it
 * verifies and settles only what this service issued: a requirement of the
 * live face of an open, armed checkout, compared field by field with what
 * that face quotes now, never with what the caller sends. A settlement is
 * that checkout's sale, through the same crash-safe saga as a payment at the
 * face (receipt, event, single-shot rules), paid into the checkout's split
 * contract. Anything else is refused before any chain call, so the service's
 * gas cannot be spent on a transfer it did not sell (ADR 8).
 */
export const FAMILIES = ["base", "stellar", "solana"] as const satisfies readonly RailFamily[];
export type Family = RailFamily;

/** The CAIP-2 wildcard each family's signers are listed under in `supported`. */
const SIGNER_NAMESPACES: Readonly<Record<Family, string>> = { base: "eip155:*", solana: "solana:*", stellar: "stellar:*" };

interface Refusal {
  reason: string;
  message: string;
  payer?: string;
}

interface IssuedPayment {
  live: Settlement;
  checkout: CheckoutForPayment;
  requirement: PaymentRequirements;
  payload: AnyPaymentPayload;
  payer: string | undefined;
}

const NOT_ISSUED = "The requirement is not one this service issued for the live face of an open checkout; this facilitator settles nothing else.";

const SERIES_AT_FACE =
  "This checkout is a recurring series: it is bought at its face (POST /c/{id}/prepare, then POST /c/{id}/pay with every held period), not settled through the facilitator.";
const RELAY_AT_FACE = "This checkout relays its seller's origin and is paid only on delivery, at its own face (/c/{id}); this facilitator does not settle it.";

export interface FacilitatorOptions {
  checkouts: CheckoutSource;
  /** The settlements of the service; the facilitator uses the live ones (on-chain), as the live face does. */
  settlements: readonly Settlement[];
}

export class Facilitator {
  private readonly checkouts: CheckoutSource;
  /** The live settlements, each of one family. */
  private readonly live: readonly Settlement[];

  constructor(opts: FacilitatorOptions) {
    this.checkouts = opts.checkouts;
    // Escrow deposits are paid only at their own faces (/e/{id}): an x402 `exact` client cannot sign one.
    this.live = opts.settlements.filter((s) => s.kind === "onchain" && !s.escrow);
  }

  supported(family: Family): SupportedKinds {
    const live = this.live.filter((s) => s.family === family);
    const rails = live.flatMap((s) => s.rails());
    return {
      kinds: rails.map((r) => ({ x402Version: 2, scheme: "exact", network: r.network, ...(r.supportedExtra ? { extra: { ...r.supportedExtra } } : {}) })),
      extensions: [],
      signers: rails.length > 0 ? { [SIGNER_NAMESPACES[family]]: [...new Set(live.flatMap((s) => s.signers()))] } : {},
    };
  }

  async verify(family: Family, network: string, requirement: unknown, payload: unknown): Promise<VerifyResponse> {
    const issued = await this.issued(family, network, requirement, payload);
    if ("reason" in issued) return verifyRefusal(issued);
    try {
      await issued.live.verify(issued.checkout, issued.payload, issued.requirement);
    } catch (err) {
      return verifyRefusal(refusalOf(err, issued.payer));
    }
    return { isValid: true, payer: issued.payer };
  }

  async settle(family: Family, network: string, requirement: unknown, payload: unknown): Promise<SettleResponse> {
    const issued = await this.issued(family, network, requirement, payload);
    if ("reason" in issued) return settleRefusal(issued, network);
    try {
      return settleResponseOf(await issued.live.submit(issued.checkout, issued.payload, issued.requirement));
    } catch (err) {
      const refusal = refusalOf(err, issued.payer);
      const settlement = err instanceof ProblemError ? (err.extensions.settlement as { transaction?: string } | undefined) : undefined;
      return settleRefusal(refusal, network, settlement?.transaction ?? "");
    }
  }

  /** The checkout and the requirement this service issued that the request names, or why there is none. */
  private async issued(family: Family, network: string, rawRequirement: unknown, rawPayload: unknown): Promise<IssuedPayment | Refusal> {
    const live = settlementOf(this.live, "onchain", network);
    if (!live || live.family !== family) {
      return { reason: "invalid_network", message: `This facilitator does not settle ${network} for family ${family}.` };
    }
    let claimed: PaymentRequirements;
    let payload: AnyPaymentPayload;
    try {
      claimed = parseRequirements(rawRequirement as Record<string, unknown>, "requirement");
      payload = parsePaymentPayload(rawPayload as Record<string, unknown>);
    } catch (err) {
      if (!(err instanceof PaymentHeaderError)) throw err;
      return { reason: err.reason, message: err.message };
    }
    const payer = live.payerOf(payload);
    if (claimed.scheme !== "exact") return { reason: "invalid_scheme", message: "Only the exact scheme is supported.", payer };
    if (claimed.network !== network) return { reason: "invalid_network", message: "The requirement names another network.", payer };

    const checkoutId = claimed.extra.checkoutId;
    if (typeof checkoutId !== "string" || !isCheckoutId(checkoutId)) return { reason: "invalid_payment_requirements", message: NOT_ISSUED, payer };
    let checkout: CheckoutForPayment;
    try {
      checkout = await this.checkouts(checkoutId);
    } catch (err) {
      if (err instanceof ProblemError && err.slug === "not-found") return { reason: "invalid_payment_requirements", message: NOT_ISSUED, payer };
      throw err;
    }
    if (settlementKindOf("live", checkout) !== "onchain") return { reason: "invalid_payment_requirements", message: NOT_ISSUED, payer };
    // A relay sale is paid only on delivery, at its face: settling it here would charge without the origin answering.
    if (checkout.relay) return { reason: "invalid_payment_requirements", message: RELAY_AT_FACE, payer };
    // A series is bought at its face with every held period (ADR 20): period 0 alone would start nothing.
    if (checkout.schedule) return { reason: "invalid_payment_requirements", message: SERIES_AT_FACE, payer };
    const requirement = requirementsFor("live", checkout, live.rails()).find((r) => r.network === network && acceptedMatches(claimed, r));
    if (!requirement) return { reason: "invalid_payment_requirements", message: NOT_ISSUED, payer };

    // A checkout that stopped selling answers only for the payment it already recorded (settled again: the same transaction).
    if (sellingRefusal("live", checkout) && !(await live.isRecorded(payload, requirement)))
      return { reason: "invalid_payment_requirements", message: NOT_ISSUED, payer };
    if (payload.x402Version === 2) {
      if (!payload.accepted || !acceptedMatches(payload.accepted, requirement)) {
        return { reason: "invalid_payment_requirements", message: "The payload's accepted requirement is not the requirement given.", payer };
      }
    } else if (payload.scheme !== "exact" || payload.network !== v1NetworkName(network)) {
      return { reason: "invalid_network", message: "The v1 payload names another scheme or network.", payer };
    }
    return { live, checkout, requirement, payload, payer };
  }
}

/** A refusal from the saga's checks: the x402 reason a payment problem carries, otherwise the problem's own slug. */
function refusalOf(err: unknown, payer: string | undefined): Refusal {
  if (!(err instanceof ProblemError)) throw err;
  const reason = typeof err.extensions.reason === "string" ? err.extensions.reason : err.slug === "gone" ? "invalid_payment_requirements" : err.slug;
  return { reason, message: err.message, ...(payer !== undefined ? { payer } : {}) };
}

function verifyRefusal(r: Refusal): VerifyResponse {
  return { isValid: false, invalidReason: r.reason, invalidMessage: r.message, ...(r.payer ? { payer: r.payer } : {}) };
}

function settleRefusal(r: Refusal, network: string, transaction = ""): SettleResponse {
  return { success: false, errorReason: r.reason, errorMessage: r.message, ...(r.payer ? { payer: r.payer } : {}), transaction, network };
}
