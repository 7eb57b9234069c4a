import { createHash, createPublicKey, verify } from "node:crypto";
import { stellarPublicKey } from "@c402/chain-addresses";
import { invalid } from "@c402/problems";
import { verifyMessage } from "viem";
import type { SignInFamily } from "./wallet-challenge";

/**
 * Whether a wallet signed a challenge message, by the scheme its family's
 * wallets use for "sign message":
 *
 * - EVM: EIP-191 (personal_sign), 0x-prefixed hex, checked by viem.
 * - Stellar: SEP-53, an ed25519 signature over SHA-256("Stellar Signed
 *   Message:\n" + the message's UTF-8 bytes), 64 bytes. The spec says hex:
 *   128 hex digits (a 0x prefix is tolerated). Its base64 (88 characters) is
 *   taken too, since that is what Freighter, the Stellar Wallets Kit and
 *   `stellar message sign` answer. Checked with Node's ed25519 (OpenSSL).
 *
 * A signature that cannot be one of its family's is 422 naming `signature`;
 * a well-formed one that does not match answers false.
 */
export async function walletSigned(family: SignInFamily, signer: string, message: string, signature: string): Promise<boolean> {
  if (family === "stellar") return sep53Verify(signer, message, stellarSignatureBytes(signature));
  if (!/^0x[0-9a-fA-F]+$/.test(signature)) throw invalid([{ field: "signature", reason: "must be 0x-prefixed hex (an EVM wallet's personal_sign)" }]);
  return verifyMessage({ address: signer as `0x${string}`, message, signature: signature as `0x${string}` }).catch(() => false);
}

/** SEP-53's prefix: a signed message can never be taken for a signed transaction. */
const SEP53_PREFIX = "Stellar Signed Message:\n";

/** What a Stellar wallet signs for `message` (SEP-53). */
export function sep53Digest(message: string): Buffer {
  return createHash("sha256").update(SEP53_PREFIX, "utf8").update(message, "utf8").digest();
}

function sep53Verify(accountId: string, message: string, signature: Buffer): boolean {
  const x = Buffer.from(stellarPublicKey(accountId)).toString("base64url");
  try {
    return verify(null, sep53Digest(message), createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" }), signature);
  } catch {
    // A key OpenSSL will not take (an account id's 32 bytes need not be a curve point): nothing it signed can match.
    return false;
  }
}

/** The 64 bytes of a Stellar signature: 128 hex digits (0x tolerated) or their base64; 422 otherwise. */
function stellarSignatureBytes(text: string): Buffer {
  const hex = text.startsWith("0x") ? text.slice(2) : text;
  if (/^[0-9a-fA-F]{128}$/.test(hex)) return Buffer.from(hex, "hex");
  if (/^[A-Za-z0-9+/]{86}==$/.test(text)) return Buffer.from(text, "base64");
  throw invalid([
    {
      field: "signature",
      reason: `must be a 64-byte ed25519 signature (SEP-53): 128 hex digits, or its base64 (88 characters); this is ${text.length} characters`,
    },
  ]);
}
