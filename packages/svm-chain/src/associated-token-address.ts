import { createHash } from "node:crypto";
import { getAddressDecoder, getAddressEncoder, isOffCurveAddress, type Address } from "@solana/kit";
import { ASSOCIATED_TOKEN_PROGRAM_ADDRESS } from "./programs";

const addressEncoder = getAddressEncoder();
const addressDecoder = getAddressDecoder();
const PDA_MARKER = Buffer.from("ProgramDerivedAddress");

/**
 * The associated token account of (owner, mint) under a token program: the
 * same program-derived address as `findAssociatedTokenPda` of
 * @solana-program/token (a test holds them equal), computed synchronously so
 * the static checks need no promise — kit's derivation awaits WebCrypto's
 * sha256 only because browsers have no other.
 */
export function associatedTokenAddress(owner: string, mint: string, tokenProgram: string): string {
  const seeds = [owner, tokenProgram, mint].map((seed) => Uint8Array.from(addressEncoder.encode(seed as Address)));
  const programId = Uint8Array.from(addressEncoder.encode(ASSOCIATED_TOKEN_PROGRAM_ADDRESS));
  for (let bump = 255; bump >= 0; bump--) {
    const hash = createHash("sha256");
    for (const seed of seeds) hash.update(seed);
    const candidate = hash.update(Uint8Array.of(bump)).update(programId).update(PDA_MARKER).digest();
    const address = addressDecoder.decode(candidate);
    // A program-derived address is one no private key can sign for: off the ed25519 curve.
    if (isOffCurveAddress(address)) return address;
  }
  throw new Error(`no associated token address for ${owner}`);
}
