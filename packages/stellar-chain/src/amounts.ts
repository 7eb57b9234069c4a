import { USDC_DECIMALS } from "./networks";

/**
 * USDC amounts between the service (atomic units of 6 decimals, as prices and
 * receipts hold them: packages/money) and Stellar (7 decimals). Going to
 * Stellar is exact: one service unit is ten Stellar units. Coming back is
 * exact or an error: a Stellar amount with a non-zero seventh decimal has no
 * service amount, and is never rounded either way.
 */
const SERVICE_DECIMALS = 6;
const SCALE = 10n ** BigInt(USDC_DECIMALS - SERVICE_DECIMALS);

/** The largest amount a SEP-41 transfer takes (i128). */
export const MAX_I128 = (1n << 127n) - 1n;

/** Service atomic USDC (6 decimals) → Stellar USDC units (7 decimals). */
export function stellarUnitsFromUsdc(atomic: bigint): bigint {
  if (atomic < 0n) throw new RangeError("a USDC amount is never negative");
  const units = atomic * SCALE;
  if (units > MAX_I128) throw new RangeError("the amount does not fit a Stellar token amount (i128)");
  return units;
}

/** Stellar USDC units (7 decimals) → service atomic USDC (6 decimals); throws when the seventh decimal is not zero. */
export function usdcFromStellarUnits(units: bigint): bigint {
  if (units < 0n) throw new RangeError("a USDC amount is never negative");
  if (units % SCALE !== 0n) {
    throw new RangeError(`${units} Stellar units (7 decimals) is not a whole number of service units (6 decimals); it is not rounded`);
  }
  return units / SCALE;
}
