import { createHash } from "node:crypto";
import { randomBase62 } from "@c402/ids";

/**
 * Wallet sessions: what a later wallet sign-in yields instead of a new key.
 * The token is `sess_` + 32 base62 characters (~190 bits), a format no API
 * key can take, and only its SHA-256 hash is stored (the same reasoning as
 * for keys). A session has scope `full`, behaves like a test key for
 * checkout defaults, and ends after SESSION_TTL_SECONDS.
 */
export const SESSION_TTL_SECONDS = 24 * 60 * 60;

const SESSION_PATTERN = /^sess_[0-9A-Za-z]{32}$/;
/** As many characters as a key's listed prefix: enough to recognise, far too few to use. */
const PREFIX_LENGTH = 12;

export function mintSessionToken(): { token: string; hash: string } {
  const token = `sess_${randomBase62(32)}`;
  return { token, hash: hashSessionToken(token) };
}

export function hashSessionToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export function isWellFormedSessionToken(token: string): boolean {
  return SESSION_PATTERN.test(token);
}

export function sessionPrefix(token: string): string {
  return token.slice(0, PREFIX_LENGTH);
}
