import { createHash } from "node:crypto";

/**
 * Who may call a gRPC server. Every process that calls others holds a token
 * of its own (RPC_TOKEN, a secret) and sends it as `authorization: Bearer …`
 * on every call; each server knows only the SHA-256 digests of its allowed
 * callers' tokens (RPC_CALLERS, not secret), so a server that is compromised
 * learns nothing it could present elsewhere, and a pod whose token is not on
 * a server's list (anything but the gateway, for payments) is refused.
 */
export type Callers = ReadonlyMap<string, string>;

/** The digest of a caller's token, as RPC_CALLERS lists it (`printf %s "$TOKEN" | sha256sum`). */
export function callerDigest(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** The shortest token accepted: 128 bits in hex, or their equivalent. */
export const MIN_TOKEN_LENGTH = 32;

const ENTRY = /^([a-z][a-z0-9-]{0,62}):([0-9a-f]{64})$/;

/** Parses RPC_CALLERS (`name:sha256hex,…`) into digest → caller name; throws naming what is wrong. */
export function parseCallers(text: string): Callers {
  const callers = new Map<string, string>();
  for (const entry of text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const match = ENTRY.exec(entry);
    if (!match) throw new Error(`RPC_CALLERS: "${entry.slice(0, 80)}" is not <caller name>:<sha256 hex of its RPC_TOKEN>`);
    const [, name, digest] = match as unknown as [string, string, string];
    if (callers.has(digest)) throw new Error(`RPC_CALLERS: ${name} and ${callers.get(digest)} have the same token`);
    callers.set(digest, name);
  }
  if (callers.size === 0) throw new Error("RPC_CALLERS lists no caller");
  return callers;
}

/** Formats digest → name pairs as RPC_CALLERS does. */
export function formatCallers(tokens: Record<string, string>): string {
  return Object.entries(tokens)
    .map(([name, token]) => `${name}:${callerDigest(token)}`)
    .join(",");
}

/** The caller a call's `authorization` metadata names, or undefined when it names none this server allows. */
export function callerOf(callers: Callers, authorization: unknown): string | undefined {
  if (typeof authorization !== "string" || !authorization.startsWith("Bearer ")) return undefined;
  const token = authorization.slice(7);
  if (token.length < MIN_TOKEN_LENGTH || token.length > 512) return undefined;
  return callers.get(callerDigest(token));
}
