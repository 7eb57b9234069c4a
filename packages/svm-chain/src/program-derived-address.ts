import { createHash } from "node:crypto";
import { getAddressDecoder, getAddressEncoder, isOffCurveAddress, type Address } from "@solana/kit";

const addressEncoder = getAddressEncoder();
const addressDecoder = getAddressDecoder();
const PDA_MARKER = Buffer.from("ProgramDerivedAddress");
/** The runtime's limit on one seed. */
const MAX_SEED_BYTES = 32;

/**
 * The program-derived address of `seeds` under `programId` (the highest bump
 * that lands off the curve): the same address as kit's
 * `getProgramDerivedAddress` (a test holds them equal), computed synchronously
 * so the static checks need no promise — kit's derivation awaits WebCrypto's
 * sha256 only because browsers have no other.
 */
export function programDerivedAddress(seeds: readonly Uint8Array[], programId: string): string {
  if (seeds.some((seed) => seed.length > MAX_SEED_BYTES)) throw new Error(`a seed is longer than ${MAX_SEED_BYTES} bytes`);
  const program = Uint8Array.from(addressEncoder.encode(programId as Address));
  for (let bump = 255; bump >= 0; bump--) {
    const hash = createHash("sha256");
    for (const seed of seeds) hash.update(seed);
    const candidate = hash.update(Uint8Array.of(bump)).update(program).update(PDA_MARKER).digest();
    const address = addressDecoder.decode(candidate);
    // A program-derived address is one no private key can sign for: off the ed25519 curve.
    if (isOffCurveAddress(address)) return address;
  }
  throw new Error(`no program-derived address for these seeds under ${programId}`);
}

/** An address as a seed: its 32 bytes. */
export function addressSeed(address: string): Uint8Array {
  return Uint8Array.from(addressEncoder.encode(address as Address));
}
