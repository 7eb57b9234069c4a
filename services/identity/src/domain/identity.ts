import type { Actor } from "@c402/account-events";
import { isId, newId } from "@c402/ids";
import { ProblemError, invalid } from "@c402/problems";
import { identityStore as store, type ApiKeyPage, type ApiKeyRow, type IdentityDb, type PayoutWalletRow } from "../store/identity-store";
import { recordActivity } from "./account-events";
import { hashApiKey, isWellFormedApiKey, mintApiKey, mintRefusal, type CredentialKind, type KeyMode, type MintingCredential, type Scope } from "./api-keys";
import { hashSessionToken, isWellFormedSessionToken, openSession, sessionActor, sessionPrefix, type OpenedSession } from "./sessions";
import {
  challengeMessage,
  challengeRejected,
  newChallengeNonce,
  nonceOf,
  signInNetwork,
  validateChallenge,
  validateVerify,
  type ChallengeInput,
} from "./wallet-challenge";
import { walletSigned } from "./wallet-signatures";

/** The most keys one list call answers, whoever asks (the gateway asks at most 201). */
export const LIST_PAGE_SIZE_MAX = 1000;

export interface IdentitySettings {
  baseUrl: string;
  challengeTtlSeconds: number;
}

/** Expired challenges deleted per creation: bounded, and well above the creation rate. */
const PURGE_BATCH = 100;

/**
 * Every wallet sign-in yields a fresh automation key, shown once (the first
 * one creates the account: its first key; a later one is how a wallet-only
 * seller recovers access), and a session beside it.
 */
export interface SignInResult {
  accountId: string;
  accountCreatedAt: Date;
  accountCreated: boolean;
  wallet: PayoutWalletRow;
  key: ApiKeyRow;
  secret: string;
  session: OpenedSession;
}

/** What a bearer secret stands for. `id` and `prefix` name the key, or the session. */
export interface ResolvedCredential {
  kind: CredentialKind;
  id: string;
  accountId: string;
  prefix: string;
  scope: Scope;
  mode: KeyMode;
  /** How account events name the credential. */
  actor: Actor;
  /** When a session ends (keys do not expire). */
  expiresAt?: Date;
}

/** Identity rules: wallet sign-in, API key lifecycle and credential resolution. */
export class Identity {
  constructor(
    private readonly db: IdentityDb,
    private readonly settings: IdentitySettings,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async createChallenge(input: ChallengeInput) {
    const { address, network } = validateChallenge(input);
    const issuedAt = this.now();
    const expiresAt = new Date(issuedAt.getTime() + this.settings.challengeTtlSeconds * 1000);
    const nonce = newChallengeNonce();
    const message = challengeMessage({ baseUrl: this.settings.baseUrl, address, network, nonce, issuedAt, expiresAt });
    await store.deleteExpiredChallenges(this.db, issuedAt, PURGE_BATCH);
    await store.insertChallenge(this.db, { nonce, address, network: input.network, message, expires_at: expiresAt });
    return { message, nonce, expiresAt, expiresInSeconds: this.settings.challengeTtlSeconds };
  }

  /**
   * Consumes a signed challenge (EVM or Stellar: the challenge's network
   * says which, wallet-signatures.ts how it is checked). A signature that
   * does not match leaves the challenge unused. The first sign-in creates
   * the account with the wallet as its verified default payout wallet of
   * its family. Every sign-in mints a
   * fresh automation key (test mode, scope `full`), shown once: the first is
   * the account's first key, a later one is how a wallet-only seller
   * recovers access (the spec: "Re-signing later mints a fresh key"). A
   * session is opened beside it, for browsers and scripts that hold one.
   */
  async verifySignature(input: { message: string; signature: string }): Promise<SignInResult> {
    validateVerify(input);
    const nonce = nonceOf(input.message);
    if (!nonce) throw challengeRejected();
    return this.db.transaction().execute(async (trx) => {
      const challenge = await store.claimChallenge(trx, nonce, this.now());
      const network = challenge && signInNetwork(challenge.network);
      if (!challenge || !network || challenge.message !== input.message) throw challengeRejected();
      const family = network.family;
      if (!(await walletSigned(family, challenge.address, challenge.message, input.signature))) throw challengeRejected();

      const at = this.now();
      const existing = await store.findSignerWallet(trx, family, challenge.address);
      let account: Pick<SignInResult, "accountId" | "accountCreatedAt" | "accountCreated" | "wallet">;
      if (existing) {
        const found = await store.findAccount(trx, existing.account_id);
        account = { accountId: existing.account_id, accountCreatedAt: found?.created_at ?? at, accountCreated: false, wallet: existing };
      } else {
        const accountId = newId("account");
        await store.insertAccount(trx, { id: accountId, created_at: at });
        const wallet = { account_id: accountId, chain_family: family, address: challenge.address, verified: true, is_default: true };
        await store.insertPayoutWallet(trx, wallet);
        await recordActivity(trx, {
          accountId,
          action: "account.created",
          objectId: accountId,
          detail: { via: "wallet", chain_family: family, address: challenge.address },
          actor: "wallet",
          testMode: false,
          at,
        });
        account = { accountId, accountCreatedAt: at, accountCreated: true, wallet };
      }
      const minted = mintApiKey("test");
      const key = await store.insertApiKey(trx, {
        id: newId("apiKey"),
        account_id: account.accountId,
        name: "wallet sign-in",
        prefix: minted.prefix,
        secret_hash: minted.hash,
        scope: "full",
        mode: "test",
      });
      await recordActivity(trx, { ...keyCreated(key, "wallet"), at });
      const session = await openSession(trx, { accountId: account.accountId, via: "wallet", at, detail: { address: challenge.address } });
      return { ...account, key, secret: minted.secret, session };
    });
  }

  /**
   * Resolves a bearer secret: an API key, or a session (scope `full`;
   * test mode, so checkouts it creates default to rehearsal, as a test key's do).
   */
  async resolve(secret: string): Promise<ResolvedCredential> {
    if (isWellFormedSessionToken(secret)) {
      const session = await store.findSessionByHash(this.db, hashSessionToken(secret));
      if (!session || session.revoked_at || session.expires_at <= this.now()) {
        throw new ProblemError("unauthenticated", {
          message: "The session is unknown, revoked or expired.",
          help: { fix: "Sign in again (with the wallet: POST /auth/wallet/challenge, then /auth/wallet/verify; by mail: POST /auth/magic-link/request)." },
        });
      }
      return {
        kind: "session",
        id: session.id,
        accountId: session.account_id,
        prefix: sessionPrefix(secret),
        scope: "full",
        mode: "test",
        actor: sessionActor(session.via),
        expiresAt: session.expires_at,
      };
    }
    const rejected = new ProblemError("unauthenticated", "The API key is missing, malformed, unknown or revoked.");
    if (!isWellFormedApiKey(secret)) throw rejected;
    const key = await store.findApiKeyByHash(this.db, hashApiKey(secret));
    if (!key || key.revoked_at) throw rejected;
    await store.touchApiKey(this.db, key.id, this.now());
    return {
      kind: "api_key",
      id: key.id,
      accountId: key.account_id,
      prefix: key.prefix,
      scope: key.scope as Scope,
      mode: key.mode as KeyMode,
      actor: `key:${key.prefix}`,
    };
  }

  /** Mints a key for the account; 403 when it would be more powerful than the credential asking (see mintRefusal). */
  async createKey(accountId: string, input: { name?: string; scope: Scope; mode: KeyMode }, mintedBy: MintingCredential, actor: Actor) {
    if (input.name !== undefined && input.name.length > 120) throw invalid([{ field: "name", reason: "must be at most 120 characters" }]);
    const refusal = mintRefusal(mintedBy, input);
    if (refusal) {
      throw new ProblemError("forbidden", {
        message: refusal,
        help: { fix: "Ask for a key no more powerful than the credential you use (for a live key: a live key with scope `full`, or a wallet session)." },
        extensions: { reason: "key_more_powerful_than_minter" },
      });
    }
    if (!(await store.findAccount(this.db, accountId))) throw new ProblemError("not-found", "No such account.");
    const minted = mintApiKey(input.mode);
    const key = await this.db.transaction().execute(async (trx) => {
      const inserted = await store.insertApiKey(trx, {
        id: newId("apiKey"),
        account_id: accountId,
        name: input.name ?? null,
        prefix: minted.prefix,
        secret_hash: minted.hash,
        scope: input.scope,
        mode: input.mode,
      });
      await recordActivity(trx, { ...keyCreated(inserted, actor), at: this.now() });
      return inserted;
    });
    return { key, secret: minted.secret };
  }

  /** One page of the account's keys, newest first. */
  async listKeys(accountId: string, page: ApiKeyPage) {
    if (!Number.isInteger(page.size) || page.size < 1 || page.size > LIST_PAGE_SIZE_MAX) {
      throw invalid([{ field: "page_size", reason: `must be from 1 to ${LIST_PAGE_SIZE_MAX}` }]);
    }
    return store.listApiKeys(this.db, accountId, page);
  }

  /** Revokes the key at once; revoking it again answers it unchanged and records nothing. */
  async revokeKey(accountId: string, keyId: string, actor: Actor) {
    // An id that cannot be a key's (a NUL, a wrong prefix) is not looked up: PostgreSQL refuses some such text.
    if (!isId("apiKey", keyId)) throw new ProblemError("not-found", "No such key on this account.");
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      const found = await store.lockApiKey(trx, accountId, keyId);
      if (!found) throw new ProblemError("not-found", "No such key on this account.");
      if (found.revoked_at) return found;
      const key = await store.revokeApiKey(trx, keyId, now);
      await recordActivity(trx, {
        accountId,
        action: "key.revoked",
        objectId: key.id,
        detail: { prefix: key.prefix, name: key.name },
        actor,
        testMode: key.mode === "test",
        at: now,
      });
      return key;
    });
  }

  /** Logout: the session stops being accepted at once; ending it again answers when it ended. */
  async endSession(accountId: string, sessionId: string, actor: Actor): Promise<Date> {
    if (!isId("session", sessionId)) throw new ProblemError("not-found", "No such session on this account.");
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      const session = await store.lockSession(trx, accountId, sessionId);
      if (!session) throw new ProblemError("not-found", "No such session on this account.");
      if (session.revoked_at) return session.revoked_at;
      await store.revokeSession(trx, sessionId, now);
      await recordActivity(trx, { accountId, action: "session.ended", objectId: sessionId, detail: {}, actor, testMode: false, at: now });
      return now;
    });
  }

  payoutWallets(accountId: string) {
    return store.listPayoutWallets(this.db, accountId);
  }
}

/** The account event of a minted key: its listed prefix, never its secret. */
function keyCreated(key: ApiKeyRow, actor: Actor) {
  return {
    accountId: key.account_id,
    action: "key.created" as const,
    objectId: key.id,
    detail: { prefix: key.prefix, name: key.name, scope: key.scope, mode: key.mode },
    actor,
    testMode: key.mode === "test",
  };
}
