import createKeccakHash from "keccak";

/** The sponge under the package's hash objects: its native addon's, or its JavaScript one where the addon cannot load. */
interface KeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  squeeze(length: number): Buffer;
}

/** keccak-256's sponge: 1088-bit rate, 512-bit capacity, no domain suffix (Ethereum's, not SHA3-256's). */
const RATE = 1088;
const CAPACITY = 512;

/**
 * One state, re-initialized for each hash: the package's `createKeccakHash`
 * builds a whole stream (a Transform, with its readable and writable state)
 * around the state on every call, which cost more than the hashing itself
 * (3.5 µs against 1.4 µs for 130 bytes) and filled the young generation.
 * The state is taken from a hash object of the given entry point ("keccak"
 * chooses the addon or its JavaScript; "keccak/js" is always the JavaScript):
 * keccak 3.0.4 keeps it as `_state`, and the property tests of both against
 * viem's keccak-256 fail if that ever changes.
 */
export function keccak256On(createHash: typeof createKeccakHash): (data: Uint8Array) => Uint8Array {
  const state = new (createHash("keccak256") as unknown as { _state: { constructor: new () => KeccakState } })._state.constructor();
  // Synchronous, so the one state is never shared by two hashes at once.
  return (data) => {
    state.initialize(RATE, CAPACITY);
    state.absorb(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    return state.squeeze(32);
  };
}

/**
 * keccak-256 on the native addon (prebuilt, like secp256k1's): viem's, in
 * JavaScript, took about four times as long, and every payment verified
 * hashes five times (the struct hash, the digest, the signer's key, the
 * rehearsal's transaction hash). Where the addon cannot load (a bundled
 * build), the package's JavaScript.
 */
export const keccak256Bytes = keccak256On(createKeccakHash);
