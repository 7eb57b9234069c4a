import type { PaymentRequirements } from "@x402/core/types";
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { V1_TO_V2_NETWORK_MAP } from "@x402/svm";

/**
 * Which of a seller's `accepts[]` a wallet can pay: the `exact` scheme, on the
 * wallet's network, in USDC. v1 sellers name networks ("base-sepolia",
 * "solana-devnet"); they are mapped to CAIP-2 with the official packages' own
 * tables, so a v1 seller is matched exactly as the official client would.
 */

/** A v1 requirement carries its amount as `maxAmountRequired`; v2 as `amount`. */
type AnyRequirement = PaymentRequirements & { maxAmountRequired?: string };

/** The CAIP-2 id of a requirement's network, whichever protocol version named it. */
export function caip2Of(network: string): string {
  if (network.includes(":")) return network;
  const chainId = (EVM_NETWORK_CHAIN_ID_MAP as Record<string, number | undefined>)[network];
  if (chainId !== undefined) return `eip155:${chainId}`;
  return V1_TO_V2_NETWORK_MAP[network] ?? network;
}

/** The atomic amount a requirement asks (undefined: not a non-negative integer, so not payable). */
export function amountOf(requirement: PaymentRequirements): bigint | undefined {
  const r = requirement as AnyRequirement;
  const raw = r.amount ?? r.maxAmountRequired;
  return typeof raw === "string" && /^[0-9]{1,40}$/.test(raw) ? BigInt(raw) : undefined;
}

/** EVM addresses compare case-insensitively (checksums); Solana's base58 is case-sensitive. */
function sameAsset(network: string, a: string, b: string): boolean {
  return network.startsWith("eip155:") ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/**
 * The first requirement the wallet can pay, in the seller's order (the seller's
 * preference, as the official client's default selector keeps it).
 */
export function payableRequirement(accepts: readonly PaymentRequirements[], network: string, usdc: string): PaymentRequirements | undefined {
  return accepts.find(
    (r) =>
      r.scheme === "exact" &&
      caip2Of(r.network) === network &&
      typeof r.asset === "string" &&
      sameAsset(network, r.asset, usdc) &&
      typeof r.payTo === "string" &&
      amountOf(r) !== undefined,
  );
}
