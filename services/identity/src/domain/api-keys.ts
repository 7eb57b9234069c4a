import { sha256Hex } from "./stored-secrets";
import type { CredentialKindName, KeyModeName, ScopeName } from "@c402/contracts";
import { randomBase62 } from "@c402/ids";

/**
 * API keys: `sk_test_…` or `sk_live_…` followed by 32 base62 characters
 * (~190 bits). Only a SHA-256 hash is stored; with that much entropy a slow
 * hash would add nothing. The prefix (mode plus four characters) is what lists show.
 */
export type KeyMode = KeyModeName;
export type Scope = ScopeName;
export type CredentialKind = CredentialKindName;

const SCOPE_RANK: Record<Scope, number> = { read_only: 1, payments: 2, full: 3 };

const KEY_PATTERN = /^sk_(test|live)_[0-9A-Za-z]{32}$/;
const PREFIX_LENGTH = "sk_test_".length + 4;

export function mintApiKey(mode: KeyMode): { secret: string; prefix: string; hash: string } {
  const secret = `sk_${mode}_${randomBase62(32)}`;
  return { secret, prefix: secret.slice(0, PREFIX_LENGTH), hash: hashApiKey(secret) };
}

export function hashApiKey(secret: string): string {
  return sha256Hex(secret);
}

export function isWellFormedApiKey(secret: string): boolean {
  return KEY_PATTERN.test(secret);
}

/** The credential asking for a new key. */
export interface MintingCredential {
  kind: CredentialKind;
  scope: Scope;
  mode: KeyMode;
}

/**
 * A key is never minted more powerful than the credential asking for it: an
 * API key may mint keys up to its own scope and a live key only when it is
 * live itself (a test key mints test keys). A wallet session proves the caller
 * owns the account's wallet, so it may mint any key. Returns why a mint is
 * refused, or undefined when it is allowed.
 */
export function mintRefusal(by: MintingCredential, wanted: { scope: Scope; mode: KeyMode }): string | undefined {
  if (by.kind === "session") return undefined;
  if (SCOPE_RANK[wanted.scope] > SCOPE_RANK[by.scope]) {
    return `A key with scope \`${by.scope}\` cannot mint a key with scope \`${wanted.scope}\`: a key is never minted more powerful than the key asking for it.`;
  }
  if (wanted.mode === "live" && by.mode !== "live") {
    return "A test key cannot mint a live key: a key is never minted more powerful than the key asking for it. Use a live key with scope `full`, or sign in with the wallet and use the session.";
  }
  return undefined;
}
