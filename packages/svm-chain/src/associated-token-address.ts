import { addressSeed, programDerivedAddress } from "./program-derived-address";
import { ASSOCIATED_TOKEN_PROGRAM_ADDRESS } from "./programs";

/**
 * The associated token account of (owner, mint) under a token program: the
 * same program-derived address as `findAssociatedTokenPda` of
 * @solana-program/token (a test holds them equal), computed synchronously.
 */
export function associatedTokenAddress(owner: string, mint: string, tokenProgram: string): string {
  return programDerivedAddress([owner, tokenProgram, mint].map(addressSeed), ASSOCIATED_TOKEN_PROGRAM_ADDRESS);
}
