import { sha256Hex } from "./stored-secrets";
import type { Actor } from "@c402/account-events";
import { newId, randomBase62 } from "@c402/ids";
import { identityStore as store, type IdentityDb, type SessionVia } from "../store/identity-store";
import { recordActivity } from "./account-events";

/**
 * Sessions, opened by a wallet sign-in (beside its key) or a magic link.
 * The token is `sess_` + 32 base62 characters (~190 bits), a format no API
 * key can take, and only its SHA-256 hash is stored (the same reasoning as
 * for keys). A session has scope `full`, behaves like a test key for
 * checkout defaults, and ends after SESSION_TTL_SECONDS. The same token is
 * the bearer token the dashboard holds and the value of the browser's
 * session cookie (the gateway sets it), so logging out ends both.
 */
export const SESSION_TTL_SECONDS = 24 * 60 * 60;

/** Expired sessions deleted per opening: bounded, and well above the opening rate. */
const PURGE_BATCH = 100;

/** How account events name what a session does: a wallet's session is `wallet`, a browser (magic-link) session `session`. */
export function sessionActor(via: SessionVia): Actor {
  return via === "magic_link" ? "session" : "wallet";
}

export interface OpenedSession {
  id: string;
  token: string;
  expiresAt: Date;
}

/** Opens a session for the account and records `session.opened` (how, plus `detail`), both in the caller's transaction. */
export async function openSession(
  db: IdentityDb,
  input: { accountId: string; via: SessionVia; at: Date; detail: Record<string, unknown> },
): Promise<OpenedSession> {
  await store.deleteExpiredSessions(db, input.at, PURGE_BATCH);
  const minted = mintSessionToken();
  const expiresAt = new Date(input.at.getTime() + SESSION_TTL_SECONDS * 1000);
  const id = newId("session");
  await store.insertSession(db, { id, account_id: input.accountId, token_hash: minted.hash, expires_at: expiresAt, via: input.via });
  await recordActivity(db, {
    accountId: input.accountId,
    action: "session.opened",
    objectId: id,
    detail: { via: input.via, ...input.detail, expires_at: expiresAt.toISOString() },
    actor: sessionActor(input.via),
    testMode: false,
    at: input.at,
  });
  return { id, token: minted.token, expiresAt };
}

const SESSION_PATTERN = /^sess_[0-9A-Za-z]{32}$/;
/** As many characters as a key's listed prefix: enough to recognise, far too few to use. */
const PREFIX_LENGTH = 12;

export function mintSessionToken(): { token: string; hash: string } {
  const token = `sess_${randomBase62(32)}`;
  return { token, hash: hashSessionToken(token) };
}

export function hashSessionToken(token: string): string {
  return sha256Hex(token);
}

export function isWellFormedSessionToken(token: string): boolean {
  return SESSION_PATTERN.test(token);
}

export function sessionPrefix(token: string): string {
  return token.slice(0, PREFIX_LENGTH);
}
