import { createHmac, timingSafeEqual } from "node:crypto";
import { keyFor, type Keyring } from "./keyring";

/**
 * Tokens the service issues and later checks without storing them (passes):
 * HMAC-SHA256 of the token's text under a keyring key. The current key
 * tags; every key of the ring still checks, so a key is rotated by putting a
 * new one first and dropping the old one once its tokens have expired. Use a
 * keyring of its own for each kind of token, never the one that seals.
 */
export class TokenTagger {
  constructor(private readonly keyring: Keyring) {}

  /** The current key's id and its tag of `text`. */
  tag(text: string): { keyId: string; tag: Buffer } {
    const keyId = this.keyring.currentId;
    return { keyId, tag: this.hmac(keyId, text)! };
  }

  /** True when `tag` is the tag of `text` under key `keyId` (false for a key the ring does not hold). */
  matches(keyId: string, text: string, tag: Buffer): boolean {
    const expected = this.hmac(keyId, text);
    return expected !== undefined && expected.length === tag.length && timingSafeEqual(expected, tag);
  }

  private hmac(keyId: string, text: string): Buffer | undefined {
    const key = keyFor(this.keyring, keyId);
    return key && createHmac("sha256", key).update(text, "utf8").digest();
  }
}
