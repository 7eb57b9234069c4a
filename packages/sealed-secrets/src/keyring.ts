/**
 * The master keys (KEKs): parsed from configuration `id1:base64key1,id2:base64key2`, the first
 * being the current key (used to seal), all of them able to open. The key bytes live in a
 * module-private WeakMap as KeyObjects, so a `Keyring` has no property that holds them and its
 * JSON/inspect/string forms show key ids only.
 */
import { createSecretKey, randomBytes, type KeyObject } from "node:crypto";
import { inspect } from "node:util";
import { KeyringError } from "./errors";

/** Bytes of every master key (AES-256). */
export const KEY_BYTES = 32;

/** A key id: lower-case letters, digits, `_` and `-`, 1 to 32 characters (no `.`/`:`/`,`). */
export const KEY_ID_PATTERN = /^[a-z0-9_-]{1,32}$/;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** One master key given as bytes (the `Keyring` constructor copies them; the caller may zero its copy). */
export interface KeyringEntry {
  id: string;
  key: Uint8Array;
}

const material = new WeakMap<Keyring, ReadonlyMap<string, KeyObject>>();

export class Keyring {
  /** The id of the key that seals (the first entry). */
  readonly currentId: string;
  /** Every key id, current first. */
  readonly ids: readonly string[];

  constructor(entries: readonly KeyringEntry[]) {
    if (entries.length === 0) throw new KeyringError("keyring: at least one key is required");
    const keys = new Map<string, KeyObject>();
    entries.forEach(({ id, key }, i) => {
      checkId(id, i);
      if (keys.has(id)) throw new KeyringError(`keyring: key id "${id}" appears more than once`);
      if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) {
        const got = key instanceof Uint8Array ? `${key.length} bytes` : "no bytes";
        throw new KeyringError(`keyring: key "${id}" must be exactly ${KEY_BYTES} bytes (got ${got})`);
      }
      if (key.every((b) => b === 0)) throw new KeyringError(`keyring: key "${id}" is all zero bytes (a placeholder, not a key)`);
      keys.set(id, createSecretKey(Buffer.from(key)));
    });
    this.ids = Object.freeze([...keys.keys()]);
    this.currentId = this.ids[0]!;
    material.set(this, keys);
    Object.freeze(this);
  }

  has(id: string): boolean {
    return this.ids.includes(id);
  }

  toJSON(): { currentId: string; ids: readonly string[] } {
    return { currentId: this.currentId, ids: this.ids };
  }

  toString(): string {
    return `Keyring(current=${this.currentId}, ids=${this.ids.join(",")})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/** The master key under `id`, for this package's sealer only (not exported from the package). */
export function keyFor(keyring: Keyring, id: string): KeyObject | undefined {
  return material.get(keyring)?.get(id);
}

function checkId(id: unknown, index: number): asserts id is string {
  // The id is not echoed when invalid: a misplaced key could sit where the id belongs.
  if (typeof id !== "string" || !KEY_ID_PATTERN.test(id)) {
    throw new KeyringError(`keyring: entry ${index + 1}: key id must match ${KEY_ID_PATTERN.source}`);
  }
}

/**
 * Parses `id1:base64key1,id2:base64key2` (first = current). Surrounding whitespace of the text and
 * of each entry is ignored; each key is standard padded base64 of exactly 32 bytes.
 */
export function parseKeyring(text: string): Keyring {
  if (typeof text !== "string" || text.trim() === "") {
    throw new KeyringError("keyring: empty; expected id1:base64key1[,id2:base64key2...] (first = current)");
  }
  const decoded: Buffer[] = [];
  try {
    const entries = text
      .trim()
      .split(",")
      .map((raw, i): KeyringEntry => {
        const entry = raw.trim();
        if (entry === "") throw new KeyringError(`keyring: entry ${i + 1} is empty (stray comma?)`);
        const colon = entry.indexOf(":");
        if (colon < 0) throw new KeyringError(`keyring: entry ${i + 1} is not of the form id:base64key`);
        const id = entry.slice(0, colon);
        checkId(id, i);
        const b64 = entry.slice(colon + 1);
        if (b64 === "") throw new KeyringError(`keyring: key "${id}" is empty`);
        if (!BASE64.test(b64)) throw new KeyringError(`keyring: key "${id}" is not valid padded base64`);
        const key = Buffer.from(b64, "base64");
        decoded.push(key);
        if (key.length !== KEY_BYTES)
          throw new KeyringError(`keyring: key "${id}" must be exactly ${KEY_BYTES} bytes after base64 decoding (got ${key.length})`);
        return { id, key };
      });
    return new Keyring(entries);
  } finally {
    for (const key of decoded) key.fill(0);
  }
}

/** A fresh one-key keyring text, `<id>:<base64 of 32 random bytes>`, for `parseKeyring`. */
export function generateKeyringText(id = "k1"): string {
  checkId(id, 0);
  const key = randomBytes(KEY_BYTES);
  try {
    return `${id}:${key.toString("base64")}`;
  } finally {
    key.fill(0);
  }
}
