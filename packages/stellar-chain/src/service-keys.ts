import { Keypair } from "@stellar/stellar-sdk";

/** A service key from its secret seed (S…, strkey with checksum); no error repeats the secret. */
export function serviceKeypair(secret: string, what: string): Keypair {
  try {
    return Keypair.fromSecret(secret.trim());
  } catch {
    throw new Error(`the ${what} is not a Stellar secret seed (S… with a valid checksum)`);
  }
}
