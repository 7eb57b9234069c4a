/**
 * The sealed form, one ASCII string for a text column:
 *
 *   v1.<keyId>.<wrappedDek>.<iv>.<ct>.<tag>
 *
 * - `keyId`: the master key that wrapped the data key (`[a-z0-9_-]{1,32}`);
 * - `wrappedDek`: base64url (no padding) of dekIv (12) | AES-256-GCM(KEK, dek) (32) | dekTag (16) = 60 bytes;
 * - `iv`, `ct`, `tag`: base64url (no padding) of the data layer: 12-byte IV, ciphertext (as long
 *   as the UTF-8 plaintext, empty for an empty one), 16-byte tag.
 *
 * Decoding is strict: six segments, version `v1`, canonical base64url only (so no two strings
 * decode to the same bytes), exact lengths (a truncated or extended tag is malformed).
 */
import { SealedSecretError } from "./errors";
import { KEY_BYTES, KEY_ID_PATTERN } from "./keyring";

export const VERSION = "v1";
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
export const WRAPPED_DEK_BYTES = IV_BYTES + KEY_BYTES + TAG_BYTES;

export interface SealedParts {
  keyId: string;
  /** dekIv | encrypted dek | dekTag. */
  wrappedDek: Buffer;
  iv: Buffer;
  ct: Buffer;
  tag: Buffer;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

function b64url(bytes: Buffer): string {
  return bytes.toString("base64url");
}

function fromB64url(text: string, length?: number): Buffer {
  if (!BASE64URL.test(text) || text.length % 4 === 1) throw new SealedSecretError("malformed");
  const bytes = Buffer.from(text, "base64url");
  // Canonical only: unused low bits of the last character must be zero.
  if (bytes.toString("base64url") !== text) throw new SealedSecretError("malformed");
  if (length !== undefined && bytes.length !== length) throw new SealedSecretError("malformed");
  return bytes;
}

export function encodeSealed(parts: SealedParts): string {
  return [VERSION, parts.keyId, b64url(parts.wrappedDek), b64url(parts.iv), b64url(parts.ct), b64url(parts.tag)].join(".");
}

export function decodeSealed(sealed: unknown): SealedParts {
  if (typeof sealed !== "string") throw new SealedSecretError("malformed");
  const segments = sealed.split(".");
  if (segments.length !== 6) throw new SealedSecretError("malformed");
  const [version, keyId, wrappedDek, iv, ct, tag] = segments as [string, string, string, string, string, string];
  if (version !== VERSION || !KEY_ID_PATTERN.test(keyId)) throw new SealedSecretError("malformed");
  return {
    keyId,
    wrappedDek: fromB64url(wrappedDek, WRAPPED_DEK_BYTES),
    iv: fromB64url(iv, IV_BYTES),
    ct: fromB64url(ct),
    tag: fromB64url(tag, TAG_BYTES),
  };
}
