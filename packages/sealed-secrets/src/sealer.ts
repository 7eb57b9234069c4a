/**
 * Envelope encryption: each secret is encrypted with AES-256-GCM under a fresh random 32-byte data
 * key (DEK); the DEK is encrypted (wrapped) with AES-256-GCM under the keyring's current master key
 * (KEK). The caller's AAD (the owning resource's id) authenticates both layers, so a sealed value
 * copied to another row does not open. The wrap layer also authenticates the key id, so relabelling
 * a value with another id does not open either, even if two ids held the same key.
 */
import { createCipheriv, createDecipheriv, randomBytes, type KeyObject } from "node:crypto";
import { inspect } from "node:util";
import { KeyringError, SealedSecretError } from "./errors";
import { decodeSealed, encodeSealed, IV_BYTES, TAG_BYTES, type SealedParts } from "./format";
import { KEY_BYTES, Keyring, keyFor } from "./keyring";

const ALGORITHM = "aes-256-gcm";
const GCM = { authTagLength: TAG_BYTES } as const;
const DATA_AAD_PREFIX = "c402/sealed-secrets/v1/data\0";
const DEK_AAD_PREFIX = "c402/sealed-secrets/v1/dek\0";
const LONE_SURROGATE = /\p{Cs}/u;

function checkAad(aad: unknown): asserts aad is string {
  if (typeof aad !== "string" || aad === "" || LONE_SURROGATE.test(aad)) throw new SealedSecretError("invalid-input");
}

/** AAD of the data layer: a domain label, then the caller's AAD. */
function dataAad(aad: string): Buffer {
  return Buffer.from(DATA_AAD_PREFIX + aad, "utf8");
}

/** AAD of the wrap layer: a domain label, the key id (no NUL in ids), then the caller's AAD. */
function dekAad(keyId: string, aad: string): Buffer {
  return Buffer.from(`${DEK_AAD_PREFIX}${keyId}\0${aad}`, "utf8");
}

export class SecretSealer {
  readonly #keyring: Keyring;

  constructor(keyring: Keyring) {
    if (!(keyring instanceof Keyring) || keyFor(keyring, keyring.currentId) === undefined) {
      throw new KeyringError("sealed-secrets: SecretSealer needs a Keyring (from parseKeyring or new Keyring)");
    }
    this.#keyring = keyring;
    Object.freeze(this);
  }

  /** The key id new values are sealed under. */
  get currentKeyId(): string {
    return this.#keyring.currentId;
  }

  /** Every key id this sealer can open, current first. */
  get keyIds(): readonly string[] {
    return this.#keyring.ids;
  }

  /** Encrypts `plaintext` for the resource named by `aad` (non-empty) under the current master key. */
  seal(plaintext: string, aad: string): string {
    if (typeof plaintext !== "string" || LONE_SURROGATE.test(plaintext)) throw new SealedSecretError("invalid-input");
    checkAad(aad);
    const keyId = this.#keyring.currentId;
    const bytes = Buffer.from(plaintext, "utf8");
    const dek = randomBytes(KEY_BYTES);
    try {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, dek, iv, GCM);
      cipher.setAAD(dataAad(aad));
      const ct = Buffer.concat([cipher.update(bytes), cipher.final()]);
      const tag = cipher.getAuthTag();
      return encodeSealed({ keyId, wrappedDek: this.#wrap(dek, keyId, aad), iv, ct, tag });
    } finally {
      dek.fill(0);
      bytes.fill(0);
    }
  }

  /** The plaintext of a value sealed for the same `aad`; any other input throws `SealedSecretError`. */
  open(sealed: string, aad: string): string {
    checkAad(aad);
    const parts = decodeSealed(sealed);
    const dek = this.#unwrap(parts, aad);
    try {
      const bytes = this.#decrypt(parts, dek, aad);
      try {
        return bytes.toString("utf8");
      } finally {
        bytes.fill(0);
      }
    } finally {
      dek.fill(0);
    }
  }

  /**
   * The same secret wrapped under the current master key: the DEK is unwrapped with the old key and
   * wrapped again (fresh wrap IV); the data layer (iv, ct, tag) is kept. The whole value is
   * authenticated first, so a damaged value is refused rather than carried forward. A value already
   * under the current key is returned unchanged (callers can skip the write when equal).
   */
  rewrap(sealed: string, aad: string): string {
    checkAad(aad);
    const parts = decodeSealed(sealed);
    const dek = this.#unwrap(parts, aad);
    try {
      this.#decrypt(parts, dek, aad).fill(0);
      const keyId = this.#keyring.currentId;
      if (parts.keyId === keyId) return sealed;
      return encodeSealed({ ...parts, keyId, wrappedDek: this.#wrap(dek, keyId, aad) });
    } finally {
      dek.fill(0);
    }
  }

  /** The id of the master key a sealed value is wrapped under (format checked, nothing decrypted). */
  keyIdOf(sealed: string): string {
    return decodeSealed(sealed).keyId;
  }

  toJSON(): { currentKeyId: string; keyIds: readonly string[] } {
    return { currentKeyId: this.currentKeyId, keyIds: this.keyIds };
  }

  toString(): string {
    return `SecretSealer(current=${this.currentKeyId}, ids=${this.keyIds.join(",")})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }

  #kek(keyId: string): KeyObject {
    const kek = keyFor(this.#keyring, keyId);
    if (kek === undefined) throw new SealedSecretError("unknown-key");
    return kek;
  }

  #wrap(dek: Buffer, keyId: string, aad: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.#kek(keyId), iv, GCM);
    cipher.setAAD(dekAad(keyId, aad));
    const wrapped = Buffer.concat([iv, cipher.update(dek), cipher.final(), cipher.getAuthTag()]);
    return wrapped;
  }

  /** The DEK (caller zero-fills it), or `SealedSecretError`. */
  #unwrap(parts: SealedParts, aad: string): Buffer {
    const kek = this.#kek(parts.keyId);
    const iv = parts.wrappedDek.subarray(0, IV_BYTES);
    const encrypted = parts.wrappedDek.subarray(IV_BYTES, IV_BYTES + KEY_BYTES);
    const tag = parts.wrappedDek.subarray(IV_BYTES + KEY_BYTES);
    let dek: Buffer | undefined;
    try {
      if (tag.length !== TAG_BYTES) throw new SealedSecretError("malformed");
      const decipher = createDecipheriv(ALGORITHM, kek, iv, GCM);
      decipher.setAAD(dekAad(parts.keyId, aad));
      decipher.setAuthTag(tag);
      dek = decipher.update(encrypted);
      decipher.final();
      if (dek.length !== KEY_BYTES) throw new SealedSecretError("malformed");
      return dek;
    } catch (error) {
      dek?.fill(0);
      if (error instanceof SealedSecretError) throw error;
      throw new SealedSecretError("unauthentic");
    }
  }

  /** The plaintext bytes (caller zero-fills them), or `SealedSecretError`. */
  #decrypt(parts: SealedParts, dek: Buffer, aad: string): Buffer {
    let bytes: Buffer | undefined;
    try {
      if (parts.tag.length !== TAG_BYTES) throw new SealedSecretError("malformed");
      const decipher = createDecipheriv(ALGORITHM, dek, parts.iv, GCM);
      decipher.setAAD(dataAad(aad));
      decipher.setAuthTag(parts.tag);
      bytes = decipher.update(parts.ct);
      decipher.final();
      return bytes;
    } catch (error) {
      bytes?.fill(0);
      if (error instanceof SealedSecretError) throw error;
      throw new SealedSecretError("unauthentic");
    }
  }
}
