/**
 * Money in USDC atomic units (6 decimals) as bigint. One place defines the
 * spec's fee rules and their rounding:
 *  - protocol fee: 0.5% of the price plus $0.01, added on top for the buyer;
 *  - escrow fee: 1% plus $0.02, replacing the protocol fee;
 *  - platform cut: `bps` out of the seller's price (cut + seller amount = price).
 * Percentages round down to the atomic unit (the buyer is never charged a
 * fraction up); the flat parts are exact. Both rules are invertible from the
 * total, which the on-chain split relies on.
 */

export const USDC_DECIMALS = 6;
const UNIT = 10n ** BigInt(USDC_DECIMALS);

/** Largest price a checkout may carry ($1,000,000); the spec leaves it open. */
export const MAX_PRICE_ATOMIC = 1_000_000n * UNIT;
export const MIN_PRICE_ATOMIC = 1n;
export const MAX_PLATFORM_FEE_BPS = 2000;

export type FeeRule = "standard" | "escrow";

const FEE_RULES: Record<FeeRule, { bpsNumerator: bigint; bpsDenominator: bigint; flat: bigint }> = {
  standard: { bpsNumerator: 50n, bpsDenominator: 10_000n, flat: 10_000n },
  escrow: { bpsNumerator: 100n, bpsDenominator: 10_000n, flat: 20_000n },
};

export class MoneyFormatError extends Error {}

const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

/** Parses a decimal USD string ("0.10", "12", "1.234567") into atomic units. */
export function parseUsd(text: string): bigint {
  const m = DECIMAL.exec(text);
  if (!m) throw new MoneyFormatError('must be a decimal string such as "0.10"');
  const whole = m[1] as string;
  const frac = m[2] ?? "";
  if (frac.length > USDC_DECIMALS) {
    throw new MoneyFormatError(`has more than ${USDC_DECIMALS} decimal places`);
  }
  return BigInt(whole) * UNIT + BigInt(frac.padEnd(USDC_DECIMALS, "0") || "0");
}

/**
 * Parses a price ("price_usd" of a checkout create, of a platform quote):
 * a decimal string of at most six decimals, more than zero and at most
 * MAX_PRICE_ATOMIC. Throws MoneyFormatError saying what is wrong.
 */
export function parsePrice(text: string): bigint {
  const atomic = parseUsd(text);
  if (atomic < MIN_PRICE_ATOMIC) throw new MoneyFormatError("must be greater than zero");
  if (atomic > MAX_PRICE_ATOMIC) throw new MoneyFormatError(`must be at most ${MAX_PRICE_ATOMIC / UNIT}`);
  return atomic;
}

/** Formats atomic units as a USD string with exactly six decimals ("0.100000"). */
export function formatUsd(atomic: bigint): string {
  const sign = atomic < 0n ? "-" : "";
  const abs = atomic < 0n ? -atomic : atomic;
  return `${sign}${abs / UNIT}.${(abs % UNIT).toString().padStart(USDC_DECIMALS, "0")}`;
}

export function protocolFee(price: bigint, rule: FeeRule = "standard"): bigint {
  const r = FEE_RULES[rule];
  return (price * r.bpsNumerator) / r.bpsDenominator + r.flat;
}

export function platformCut(price: bigint, bps: number): bigint {
  if (!Number.isInteger(bps) || bps < 0 || bps > MAX_PLATFORM_FEE_BPS) {
    throw new RangeError(`platform fee bps must be an integer from 0 to ${MAX_PLATFORM_FEE_BPS}`);
  }
  return (price * BigInt(bps)) / 10_000n;
}

/**
 * The platform fee a new checkout takes (spec, Platforms): the create's own
 * `platform_fee_bps` when sent (0 included), else the account's standing fee
 * while it is in platform mode, else none. Catalog freezes it; the gateway
 * reads it to know, before the create, whether the platform's fee wallets
 * will be taken.
 */
export function platformFeeBpsAtCreate(sent: number | undefined, account: { platformAccount: boolean; platformFeeBps: number }): number {
  return sent ?? (account.platformAccount ? account.platformFeeBps : 0);
}

export interface Breakdown {
  price: bigint;
  providerAmount: bigint;
  /** null when the checkout carries no platform fee. */
  platformAmount: bigint | null;
  feeAmount: bigint;
  total: bigint;
}

export function breakdown(price: bigint, opts: { platformFeeBps?: number | null; rule?: FeeRule } = {}): Breakdown {
  if (price < MIN_PRICE_ATOMIC) throw new RangeError("price must be positive");
  const bps = opts.platformFeeBps ?? 0;
  const platformAmount = bps > 0 ? platformCut(price, bps) : null;
  const providerAmount = price - (platformAmount ?? 0n);
  const feeAmount = protocolFee(price, opts.rule ?? "standard");
  return { price, providerAmount, platformAmount, feeAmount, total: price + feeAmount };
}

/** Recovers the price from a total paid under `rule` (the inverse of breakdown().total). */
export function priceFromTotal(total: bigint, rule: FeeRule = "standard"): bigint {
  const r = FEE_RULES[rule];
  const rest = total - r.flat;
  if (rest <= 0n) throw new RangeError("total does not cover the flat fee");
  // rest = p + floor(p*n/d). For the standard and escrow rules d/n is an integer k,
  // so p = rest - floor(rest/(k+1)).
  const k = r.bpsDenominator / r.bpsNumerator;
  return rest - rest / (k + 1n);
}
