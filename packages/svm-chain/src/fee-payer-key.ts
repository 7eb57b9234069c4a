import { createKeyPairFromBytes, getBase58Encoder } from "@solana/kit";

export type FeePayerKeyPair = Awaited<ReturnType<typeof createKeyPairFromBytes>>;

/**
 * The fee payer's key pair from its 64-byte secret key (private seed, then
 * public key), written in base58 or as solana-keygen's JSON array of 64
 * numbers. kit checks that the two halves belong together. The key is not
 * extractable, and no error repeats the secret.
 */
export async function feePayerKeyPair(secret: string): Promise<FeePayerKeyPair> {
  const text = secret.trim();
  let bytes: Uint8Array;
  try {
    if (text.startsWith("[")) {
      const numbers: unknown = JSON.parse(text);
      if (!Array.isArray(numbers) || !numbers.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)) throw new Error("not bytes");
      bytes = Uint8Array.from(numbers as number[]);
    } else {
      bytes = Uint8Array.from(getBase58Encoder().encode(text));
    }
  } catch {
    throw new Error("the fee payer secret is neither base58 nor a JSON array of bytes");
  }
  if (bytes.length !== 64) throw new Error(`the fee payer secret has ${bytes.length} bytes, not 64`);
  try {
    return await createKeyPairFromBytes(bytes, false);
  } catch {
    throw new Error("the fee payer secret's public half does not match its private half");
  } finally {
    bytes.fill(0);
  }
}
