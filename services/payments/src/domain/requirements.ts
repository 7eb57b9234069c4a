import type { catalogV1 } from "@c402/contracts";
import { breakdown, type Breakdown } from "@c402/money";
import { ProblemError } from "@c402/problems";
import { isEvmNetworkId, type PaymentRequirements } from "@c402/x402";
import { scheduleExtra, type SeriesTerms } from "./series";

/**
 * Which requirements a face issues. The path plus the checkout's armed state
 * decide, never the payload:
 *  - the test face, and the live face of an unarmed checkout, rehearse: one
 *    testnet requirement marked `extra.rehearsal`, settled simulated;
 *  - the live face of an armed checkout lists the live rails and settles on-chain.
 * Requirements are a pure function of the checkout (price and pay_to are
 * immutable), so the paid retry is matched against exactly what was issued.
 * Every requirement names its checkout (`extra.checkoutId`), so the public
 * facilitator can find what this service issued and compare against it.
 */
// Where EVM rehearsals are quoted and the domain they are signed under (ADR 5), shared with the gateway and the escrow service.
export { REHEARSAL_DOMAIN, REHEARSAL_NETWORK } from "@c402/x402";
export const MAX_TIMEOUT_SECONDS = 300;

export type Face = "live" | "test";
/** How a face's payments settle: simulated (a rehearsal) or on-chain (live). */
export type SettlementKind = "simulated" | "onchain";

export interface CheckoutForPayment {
  id: string;
  accountId: string;
  title: string;
  priceAtomic: bigint;
  payTo: string;
  armed: boolean;
  reusable: boolean;
  status: "open" | "paid" | "expired" | "void";
  /** The platform cut the checkout was created with (frozen); absent when it carries none. */
  platform?: PlatformCut;
  /** What receipts name the platform that created the checkout (even without a cut); absent otherwise. */
  soldBy?: string;
  /**
   * The catalog's own record, handed back with a quote or a sale so the
   * gateway renders the offer and delivers the goods without asking catalog
   * again (one catalog read per payment). No rule here reads it.
   */
  listing?: catalogV1.Checkout;
  /** The revision of catalog's record this was read at (ADR 14): the gateway keeps the listing by it. */
  revision?: string;
  /** A relay or mcp checkout's origin: the sale is paid only on delivery (ADR 9). Absent for inline goods. */
  relay?: RelayOrigin;
  /** A webhook checkout: the seller fulfils each sale and marks it fulfilled. */
  webhook?: boolean;
  /** A package checkout (relay and mcp only): one payment buys `calls` calls, spendable for `ttlDays` days. */
  package?: { calls: number; ttlDays: number };
  /** The seller's payout address on each other chain family the checkout has a rail for (catalog's payout_rails beside pay_to). */
  payoutAddresses?: { solana?: string; stellar?: string };
  /** An escrow checkout's terms (esc_ ids, frozen at create): its sales are deposits into escrow, at the escrow fee (ADR 19). */
  escrow?: CheckoutEscrowTerms;
  /** A recurring series' terms (catalog's CheckoutSchedule, ADR 20): quoted on its EVM rail only, with `extra.schedule`. */
  schedule?: SeriesTerms;
  /** A plain checkout's escrow twin (escrow_offer optional): its EVM requirements advertise it as `extra.escrowAvailable`. */
  escrowTwinId?: string;
}

/** The escrow terms an escrow checkout froze at create (catalog's CheckoutEscrow): every deposit it sells is made under them. */
export interface CheckoutEscrowTerms {
  preset: "instant" | "standard" | "shipping" | "custom";
  settleSeconds: number;
  holdSeconds: number;
  backstopSeconds: number;
  /** The EVM arbiter (checksummed); absent: the checkout offers no escrow rail on Base. */
  arbiterEvm?: string;
}

/** How a relay (or mcp) checkout's origin is called (fulfillment holds the credential). */
export interface RelayOrigin {
  /** An mcp checkout: url is the seller's MCP server, the call one tools/call (of `tool`, when it sells one tool). */
  mcp?: { tool?: string };
  url: string;
  method: string;
  originKeyId?: string;
  oneOffCredential: boolean;
  /** Rehearsal deliveries a day (the checkout's test_delivery_daily_cap). */
  testDeliveryDailyCap: number;
}

/** A checkout's platform cut: `feeBps` of the price (1 to 2000), paid to `feeTo` (EVM) or, on Solana, to `feeToSolana`. */
export interface PlatformCut {
  feeBps: number;
  feeTo: string;
  /** The platform's Solana wallet, frozen at create (its standing Solana payout wallet then); absent when it had none. */
  feeToSolana?: string;
}

/** Who a sale pays: the seller, and the platform when the checkout carries a cut. The split contract is derived from exactly this. */
export interface SplitParties {
  payTo: string;
  platformFeeBps: number;
  platformFeeTo: string | null;
}

export function splitPartiesOf(checkout: CheckoutForPayment): SplitParties {
  return { payTo: checkout.payTo, platformFeeBps: checkout.platform?.feeBps ?? 0, platformFeeTo: checkout.platform?.feeTo ?? null };
}

export function settlementKindOf(face: Face, checkout: CheckoutForPayment): SettlementKind {
  return face === "live" && checkout.armed ? "onchain" : "simulated";
}

/** Why a face of this checkout no longer sells (410), or undefined when it does. Rehearsals ignore `paid`. */
export function sellingRefusal(face: Face, checkout: CheckoutForPayment): ProblemError | undefined {
  const settlement = settlementKindOf(face, checkout);
  if (checkout.status === "expired" || checkout.status === "void") {
    return new ProblemError("gone", {
      message: `This checkout is ${checkout.status} and no longer sells.`,
      help: { fix: "Ask the seller for a current link.", retry_is_safe: false },
    });
  }
  if (checkout.status === "paid" && settlement === "onchain" && !checkout.reusable) {
    return new ProblemError("gone", {
      message: "This single-shot checkout has already been paid.",
      help: { fix: "Ask the seller for a new link.", retry_is_safe: false },
    });
  }
  return undefined;
}

/** Refuses faces of a checkout that no longer sells. */
export function assertSelling(face: Face, checkout: CheckoutForPayment): void {
  const refusal = sellingRefusal(face, checkout);
  if (refusal) throw refusal;
}

/**
 * The split of a sale: the platform cut out of the price, the protocol fee on
 * top: the escrow fee for an escrow checkout's sale (it replaces the standard
 * fee, spec Limits), the standard fee otherwise. The one place a sale's fee
 * rule is chosen; the rules themselves are @c402/money's.
 */
export function priceOf(checkout: CheckoutForPayment): Breakdown {
  return breakdown(checkout.priceAtomic, { platformFeeBps: checkout.platform?.feeBps ?? 0, rule: checkout.escrow ? "escrow" : "standard" });
}

/**
 * A network a face can settle on, as the settlement that settles there
 * quotes it (a live rail, or one of the rehearsal's): which token, who the buyer pays and how much, and what the
 * requirement's `extra` tells the buyer's client.
 */
export interface Rail {
  /** The x402 scheme its requirements name (absent: `exact`; an escrow deposit's is `escrow`, ADR 19). */
  scheme?: string;
  network: string;
  asset: string;
  /** The requirement's `extra` (beside `checkoutId`): EVM the token's EIP-712 domain, Solana the fee payer; a rehearsal's adds `rehearsal: true`. */
  extra: Readonly<Record<string, unknown>>;
  /** Where this checkout's buyers pay on this network; undefined when the rail cannot sell it (no payout address there). */
  payTo(checkout: CheckoutForPayment): string | undefined;
  /** What a buyer pays on this rail, split as it moves (see each rail), in the service's atomic USDC (6 decimals), as receipts hold it. */
  amounts(checkout: CheckoutForPayment): Breakdown;
  /**
   * An atomic amount in the token's own units, as a requirement states it
   * (absent: the same, 6 decimals; Stellar's USDC has 7, ADR 17).
   */
  tokenUnits?(atomic: bigint): bigint;
  /** What a requirement's `extra` adds for this checkout (an escrow deposit's terms: `extra.escrow`); a pure function of the checkout. */
  extraFor?(checkout: CheckoutForPayment): Readonly<Record<string, unknown>>;
  /**
   * How long a series day lasts on this rail's clock, in seconds (live: 86,400; the test face's compressed
   * day: SCHEDULE_REHEARSAL_DAY_SECONDS); absent: the rail sells no series (ADR 20: Base only).
   */
  seriesDaySeconds?: number;
  /** What the facilitator's `supported` kinds say of this network (Solana: the fee payer; Stellar: that fees are sponsored). */
  supportedExtra?: { feePayer?: string; areFeesSponsored?: boolean };
  /**
   * A payment to several recipients that the service prepares for the
   * buyer's wallet to sign (POST …/prepare; Solana: a platform cut beside the
   * seller's share, ADR 16), where the one-transfer requirement cannot sell
   * the checkout: `payTo` is the seller, `transfers` every recipient in order
   * (their amounts add up to the rail's total). Never listed in a 402: an
   * x402 client signs one transfer. Undefined when there is none.
   */
  preparedPayment?(checkout: CheckoutForPayment): { payTo: string; transfers: readonly { payTo: string; amount: bigint }[] } | undefined;
}

/**
 * The requirements a face issues: one per rail of the face's settlement kind
 * (`rails`) that can sell this checkout. A rehearsal always has the EVM one
 * (ADR 5), and Solana's where the checkout has a Solana payout wallet.
 */
export function requirementsFor(_face: Face, checkout: CheckoutForPayment, rails: readonly Rail[]): PaymentRequirements[] {
  return someOrUnavailable(listedRequirementsFor(checkout, rails));
}

/** What a face's 402 lists: one requirement per rail that can sell the checkout (none, possibly). */
function listedRequirementsFor(checkout: CheckoutForPayment, rails: readonly Rail[]): PaymentRequirements[] {
  const requirements = rails.flatMap((r): PaymentRequirements[] => {
    const payTo = r.payTo(checkout);
    if (payTo === undefined) return [];
    return [
      {
        scheme: r.scheme ?? "exact",
        network: r.network,
        asset: r.asset,
        amount: tokenAmount(r, r.amounts(checkout).total),
        payTo,
        maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
        extra: {
          ...r.extra,
          ...r.extraFor?.(checkout),
          // The same purchase through escrow (spec: escrow_offer optional), where escrow runs: Base.
          ...(checkout.escrowTwinId && isEvmNetworkId(r.network) ? { escrowAvailable: checkout.escrowTwinId } : {}),
          // A series' windows as seconds after the purchase (ADR 20).
          ...(checkout.schedule && r.seriesDaySeconds !== undefined ? { schedule: scheduleExtra(checkout.schedule, r.seriesDaySeconds) } : {}),
          checkoutId: checkout.id,
        },
      },
    ];
  });
  return requirements;
}

/**
 * What a buyer pays on a rail whose payment is one transfer to the seller
 * (Solana as the official client signs it, ADR 15; Stellar, ADR 17): the
 * seller's price moves to the seller; the protocol fee, which a second
 * transfer would carry, is not charged there, and a platform's cut rides
 * only in a payment the service prepares with a second transfer.
 */
export function singleTransferAmounts(checkout: CheckoutForPayment): Breakdown {
  const price = priceOf(checkout);
  return { ...price, feeAmount: 0n, total: price.price };
}

/** A requirement's amount: the atomic amount in the rail's token units, as decimal text. */
function tokenAmount(rail: Rail, atomic: bigint): string {
  return (rail.tokenUnits?.(atomic) ?? atomic).toString();
}

/** Requirements, or 503 when no network this deployment settles can sell the checkout. */
function someOrUnavailable(requirements: PaymentRequirements[]): PaymentRequirements[] {
  if (requirements.length === 0) {
    throw new ProblemError("unavailable", {
      message: "No settleable network is available on this deployment right now.",
      help: { fix: "Retry later, or rehearse at the /test face.", retry_is_safe: true },
    });
  }
  return requirements;
}

/**
 * The requirements a face issues only through /prepare (a rail's prepared
 * payment, see Rail.preparedPayment): accepted when presented, never
 * listed in a 402.
 */
function preparedRequirementsFor(checkout: CheckoutForPayment, rails: readonly Rail[]): PaymentRequirements[] {
  return rails.flatMap((r): PaymentRequirements[] => {
    const prepared = r.preparedPayment?.(checkout);
    if (!prepared) return [];
    return [
      {
        scheme: "exact",
        network: r.network,
        asset: r.asset,
        amount: tokenAmount(r, r.amounts(checkout).total),
        payTo: prepared.payTo,
        maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
        extra: { ...r.extra, checkoutId: checkout.id, transfers: prepared.transfers.map((t) => ({ payTo: t.payTo, amount: tokenAmount(r, t.amount) })) },
      },
    ];
  });
}

/**
 * Everything a face issued for a checkout, which a presented payment must
 * match: what /prepare issues, then what its 402 lists. Prepared ones come
 * first because on their network they are the ones /prepare offers (they
 * sell a checkout with a cut, which the listed one cannot); they never equal
 * a listed one (their `extra.transfers` differs), so matching is unaffected.
 */
export function issuedRequirementsFor(checkout: CheckoutForPayment, rails: readonly Rail[]): PaymentRequirements[] {
  return someOrUnavailable([...preparedRequirementsFor(checkout, rails), ...listedRequirementsFor(checkout, rails)]);
}

export function isRehearsalRequirement(r: Pick<PaymentRequirements, "extra">): boolean {
  return r.extra.rehearsal === true;
}
