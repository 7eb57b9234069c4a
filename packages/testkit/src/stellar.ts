import { createHash } from "node:crypto";

/** What signs raw bytes with an ed25519 key: a Stellar SDK `Keypair`, for one. */
export interface Ed25519Signer {
  sign(data: Buffer): Buffer;
}

/**
 * A Stellar wallet's "sign message" (SEP-53), stated here as the SEP writes
 * it, apart from the service's own code: ed25519 over SHA-256 of the prefix
 * "Stellar Signed Message:\n" and the message's UTF-8 bytes. 64 bytes.
 */
export function sep53Sign(signer: Ed25519Signer, message: string): Buffer {
  const payload = Buffer.concat([Buffer.from("Stellar Signed Message:\n", "utf8"), Buffer.from(message, "utf8")]);
  return signer.sign(createHash("sha256").update(payload).digest());
}
