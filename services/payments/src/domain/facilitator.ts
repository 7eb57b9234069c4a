import { isId } from "@c402/ids";
import { ProblemError } from "@c402/problems";
import {
  acceptedMatches,
  parsePaymentPayload,
  parseRequirements,
  PaymentHeaderError,
  v1NetworkName,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
  type VerifyResponse,
} from "@c402/x402";
import { getAddress } from "viem";
import type { LiveChain, LiveSettlement } from "./live-settlement";
import type { CheckoutSource } from "./payments";
import { requirementsFor, sellingRefusal, settlementFor, type CheckoutForPayment } from "./requirements";

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
export const FAMILIES = ["base", "stellar", "solana"] as const;
export type Family = (typeof FAMILIES)[number];

interface Refusal {
  reason: string;
  message: string;
  payer?: string;
}

interface IssuedPayment {
  live: LiveSettlement;
  checkout: CheckoutForPayment;
  requirement: PaymentRequirements;
  payload: PaymentPayload;
  payer: string;
}

const NOT_ISSUED = "The requirement is not one this service issued for the live face of an open checkout; this facilitator settles nothing else.";

export class Facilitator {
  constructor(
    private readonly chains: ReadonlyMap<string, LiveChain>,
    private readonly checkouts: CheckoutSource,
    private readonly live: LiveSettlement | undefined,
  ) {}

  supported(family: Family) {
    const chains = family === "base" ? [...this.chains.values()] : [];
    return {
      kinds: chains.map((c) => ({ x402Version: 2, scheme: "exact", network: c.rail.network })),
      extensions: [],
      signers: chains.length > 0 ? { "eip155:*": [...new Set(chains.map((c) => c.chain.facilitator.address))] } : {},
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
      const outcome = await issued.live.submit(issued.checkout, issued.payload, issued.requirement);
      const transaction = outcome.row.tx_hash ?? "";
      if (outcome.kind === "pending") return { success: false, errorReason: "settlement_pending", payer: issued.payer, transaction, network };
      return { success: true, payer: issued.payer, transaction, network };
    } catch (err) {
      const refusal = refusalOf(err, issued.payer);
      const settlement = err instanceof ProblemError ? (err.extensions.settlement as { transaction?: string } | undefined) : undefined;
      return settleRefusal(refusal, network, settlement?.transaction ?? "");
    }
  }

  /** The checkout and the requirement this service issued that the request names, or why there is none. */
  private async issued(family: Family, network: string, rawRequirement: unknown, rawPayload: unknown): Promise<IssuedPayment | Refusal> {
    const live = this.live;
    if (family !== "base" || !live || !this.chains.has(network)) {
      return { reason: "invalid_network", message: `This facilitator does not settle ${network} for family ${family}.` };
    }
    let claimed: PaymentRequirements;
    let payload: PaymentPayload;
    try {
      claimed = parseRequirements(rawRequirement as Record<string, unknown>, "requirement");
      payload = parsePaymentPayload(rawPayload as Record<string, unknown>);
    } catch (err) {
      if (!(err instanceof PaymentHeaderError)) throw err;
      return { reason: err.reason, message: err.message };
    }
    const payer = getAddress(payload.payload.authorization.from);
    if (claimed.scheme !== "exact") return { reason: "invalid_scheme", message: "Only the exact scheme is supported.", payer };
    if (claimed.network !== network) return { reason: "invalid_network", message: "The requirement names another network.", payer };

    const checkoutId = claimed.extra.checkoutId;
    if (typeof checkoutId !== "string" || !isId("checkout", checkoutId)) return { reason: "invalid_payment_requirements", message: NOT_ISSUED, payer };
    let checkout: CheckoutForPayment;
    try {
      checkout = await this.checkouts(checkoutId);
    } catch (err) {
      if (err instanceof ProblemError && err.slug === "not-found") return { reason: "invalid_payment_requirements", message: NOT_ISSUED, payer };
      throw err;
    }
    if (settlementFor("live", checkout) !== "onchain") return { reason: "invalid_payment_requirements", message: NOT_ISSUED, payer };
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
function refusalOf(err: unknown, payer: string): Refusal {
  if (!(err instanceof ProblemError)) throw err;
  const reason = typeof err.extensions.reason === "string" ? err.extensions.reason : err.slug === "gone" ? "invalid_payment_requirements" : err.slug;
  return { reason, message: err.message, payer };
}

function verifyRefusal(r: Refusal): VerifyResponse {
  return { isValid: false, invalidReason: r.reason, invalidMessage: r.message, ...(r.payer ? { payer: r.payer } : {}) };
}

function settleRefusal(r: Refusal, network: string, transaction = ""): SettleResponse {
  return { success: false, errorReason: r.reason, errorMessage: r.message, ...(r.payer ? { payer: r.payer } : {}), transaction, network };
}
