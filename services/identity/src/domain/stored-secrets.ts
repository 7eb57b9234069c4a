import { createHash, timingSafeEqual } from "node:crypto";

/**
 * How identity keeps every bearer secret it hands out (API keys, sessions,
 * sign-in links, OAuth codes, tokens and client secrets): the SHA-256 of the
 * value only. Each value carries ~190 random bits, so a slow hash would add nothing.
 */
export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/** Compares a presented secret with a stored hash in constant time. */
export function secretMatches(presented: string, storedHash: string): boolean {
  const a = Buffer.from(sha256Hex(presented), "hex");
  const b = Buffer.from(storedHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
