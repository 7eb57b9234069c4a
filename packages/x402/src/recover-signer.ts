import secp256k1 from "secp256k1";
import { bytesToHex, getAddress, hexToBytes, type Address, type Hex } from "viem";
import { keccak256Bytes } from "./keccak";

const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;

/**
 * The address whose key made `signature` (65 bytes r‖s‖v, v in 0, 1, 27 or 28)
 * over a 32-byte digest, or undefined when the signature cannot be recovered.
 * The same rules as viem's recoverAddress, on libsecp256k1 (prebuilt, native):
 * recovering a buyer's signature in JavaScript took more CPU than the rest of
 * verifying a payment.
 */
export function recoverSigner(digest: Hex, signature: string): Address | undefined {
  if (!SIGNATURE.test(signature)) return undefined;
  const bytes = hexToBytes(signature as Hex);
  const v = bytes[64] as number;
  const recovery = v === 0 || v === 27 ? 0 : v === 1 || v === 28 ? 1 : undefined;
  if (recovery === undefined) return undefined;
  try {
    const publicKey = secp256k1.ecdsaRecover(bytes.subarray(0, 64), recovery, hexToBytes(digest), false);
    return getAddress(bytesToHex(keccak256Bytes(publicKey.subarray(1)).subarray(12)));
  } catch {
    return undefined;
  }
}
