import createKeccakHash from "keccak";

/**
 * keccak-256 on the native addon (prebuilt, like secp256k1's): viem's, in
 * JavaScript, took about four times as long, and every payment verified
 * hashes five times (the struct hash, the digest, the signer's key, the
 * rehearsal's transaction hash). Falls back to the package's JavaScript when
 * the addon cannot load on a platform.
 */
export function keccak256Bytes(data: Uint8Array): Uint8Array {
  return createKeccakHash("keccak256")
    .update(Buffer.from(data.buffer, data.byteOffset, data.byteLength))
    .digest();
}
