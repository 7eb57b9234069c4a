import { createHash } from "node:crypto";
import { identityV1 } from "@c402/contracts";
import { randomBase62 } from "@c402/ids";

/**
 * API keys: `sk_test_…` or `sk_live_…` followed by 32 base62 characters
 * (~190 bits). Only a SHA-256 hash is stored; with that much entropy a slow
 * hash would add nothing. The prefix (mode plus four characters) is what lists show.
 */
export type KeyMode = "test" | "live";
export type Scope = "read_only" | "payments" | "full";

const KEY_PATTERN = /^sk_(test|live)_[0-9A-Za-z]{32}$/;
const PREFIX_LENGTH = "sk_test_".length + 4;

export function mintApiKey(mode: KeyMode): { secret: string; prefix: string; hash: string } {
  const secret = `sk_${mode}_${randomBase62(32)}`;
  return { secret, prefix: secret.slice(0, PREFIX_LENGTH), hash: hashApiKey(secret) };
}

export function hashApiKey(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export function isWellFormedApiKey(secret: string): boolean {
  return KEY_PATTERN.test(secret);
}

export const SCOPE_TO_PROTO: Record<Scope, identityV1.Scope> = {
  read_only: identityV1.Scope.READ_ONLY,
  payments: identityV1.Scope.PAYMENTS,
  full: identityV1.Scope.FULL,
};

export const MODE_TO_PROTO: Record<KeyMode, identityV1.KeyMode> = {
  test: identityV1.KeyMode.TEST,
  live: identityV1.KeyMode.LIVE,
};

export function scopeFromProto(scope: identityV1.Scope): Scope | undefined {
  return (Object.keys(SCOPE_TO_PROTO) as Scope[]).find((k) => SCOPE_TO_PROTO[k] === scope);
}

export function modeFromProto(mode: identityV1.KeyMode): KeyMode | undefined {
  return (Object.keys(MODE_TO_PROTO) as KeyMode[]).find((k) => MODE_TO_PROTO[k] === mode);
}
