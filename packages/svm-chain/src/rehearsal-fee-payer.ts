import { DEFAULT_MAX_COMPUTE_UNIT_PRICE, DEFAULT_MAX_COMPUTE_UNITS, type ExactSvmPolicy } from "./checks";
import { programDerivedAddress } from "./program-derived-address";
import { MEMO_PROGRAM_ADDRESS } from "./programs";

const seed = (text: string) => new TextEncoder().encode(text);

/**
 * The fee payer of every Solana rehearsal requirement: a program-derived
 * address (of these seeds under the Memo program, which derives no accounts)
 * — off the ed25519 curve, so no private key exists for it and nothing can
 * ever sign as it. A transaction needs its fee payer's signature to land, so
 * a buyer's rehearsal transaction can never land on any cluster, whatever it
 * transfers and wherever it is replayed: the Solana counterpart of the EVM
 * rehearsal's EIP-712 domain that no token has (docs/adr/0005).
 */
export const REHEARSAL_FEE_PAYER = programDerivedAddress([seed("c402 rehearsal fee payer"), seed("no funds move")], MEMO_PROGRAM_ADDRESS);

/** What a rehearsal payment is held to: the live rules, with the rehearsal fee payer in the service's place. */
export function rehearsalPolicy(usdcMint: string): ExactSvmPolicy {
  return { feePayer: REHEARSAL_FEE_PAYER, usdcMint, maxComputeUnits: DEFAULT_MAX_COMPUTE_UNITS, maxComputeUnitPrice: DEFAULT_MAX_COMPUTE_UNIT_PRICE };
}
