import { sql, type Generated, type Kysely, type Selectable } from "kysely";
import type { EmbedSettingsTable } from "./embed-store";
import type { MagicLinksTable } from "./magic-link-store";
import type { OAuthClientsTable, OAuthCodesTable, OAuthGrantsTable, OAuthRequestsTable, OAuthTokensTable } from "./oauth-store";
import type { PlatformSettingsTable } from "./platform-store";

export interface AccountRow {
  id: string;
  created_at: Date;
  /** The address of an account signed in by magic link (normalised, unique); null for a wallet-only account. */
  email: string | null;
}

interface PayoutWalletsTable {
  account_id: string;
  chain_family: string;
  address: string;
  verified: boolean;
  is_default: boolean;
  created_at: Generated<Date>;
}
export type PayoutWalletRow = Omit<Selectable<PayoutWalletsTable>, "created_at">;

interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  secret_hash: string;
  scope: string;
  mode: string;
  created_at: Generated<Date>;
  revoked_at: Date | null;
  last_used_at: Date | null;
}
export type ApiKeyRow = Selectable<ApiKeysTable>;

/** One page of a newest-first list: at most `size` keys after `after` in (created_at, id) order. */
export interface ApiKeyPage {
  size: number;
  after?: { createdAt: Date; id: string };
}

interface SessionsTable {
  id: string;
  account_id: string;
  token_hash: string;
  created_at: Generated<Date>;
  expires_at: Date;
  revoked_at: Date | null;
  /** How it was opened: `wallet` (a wallet sign-in) or `magic_link`. */
  via: Generated<SessionVia>;
}
export type SessionVia = "wallet" | "magic_link";
export type SessionRow = Selectable<SessionsTable>;

export interface ChallengeRow {
  nonce: string;
  address: string;
  network: string;
  message: string;
  expires_at: Date;
  used_at: Date | null;
}

interface AccountEventsTable {
  id: string;
  account_id: string;
  action: string;
  object_id: string;
  detail: Record<string, unknown>;
  actor: string;
  test_mode: boolean;
  at: Date;
}
export type AccountEventRow = Selectable<AccountEventsTable>;

/** One page of account events, newest first: at most `size`, strictly before `before` in (at, id) order. */
export interface AccountEventPage {
  size: number;
  actionPrefix?: string;
  /** An instant (every event before it), or an event's sort key (every event after it on the page). */
  before?: { at: Date; id?: string };
}

interface ProfilesTable {
  account_id: string;
  slug: string | null;
  name: string | null;
  profile_type: string | null;
  bio: string | null;
  avatar_url: string | null;
  website_url: string | null;
  social_links: Record<string, string>;
  verified: boolean;
  created_at: Date;
  updated_at: Date;
}
export type ProfileRow = Selectable<ProfilesTable>;
/** What a profile change writes: the changed fields and the instant. */
export type ProfileChange = Partial<Omit<ProfileRow, "account_id" | "verified" | "created_at" | "updated_at">> & { updated_at: Date };

export interface IdentityTables {
  accounts: AccountRow;
  payout_wallets: PayoutWalletsTable;
  api_keys: ApiKeysTable;
  wallet_challenges: ChallengeRow;
  sessions: SessionsTable;
  account_events: AccountEventsTable;
  profiles: ProfilesTable;
  magic_links: MagicLinksTable;
  platform_settings: PlatformSettingsTable;
  oauth_clients: OAuthClientsTable;
  oauth_requests: OAuthRequestsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_codes: OAuthCodesTable;
  oauth_tokens: OAuthTokensTable;
  embed_settings: EmbedSettingsTable;
}

export type IdentityDb = Kysely<IdentityTables>;

export const identityStore = {
  insertChallenge: (db: IdentityDb, row: Omit<ChallengeRow, "used_at">) => db.insertInto("wallet_challenges").values(row).execute(),

  /** Deletes at most `limit` expired challenges (used or not); bounded so a caller never waits on a backlog. */
  deleteExpiredChallenges: async (db: IdentityDb, now: Date, limit: number) => {
    const r = await db
      .deleteFrom("wallet_challenges")
      .where("nonce", "in", (eb) => eb.selectFrom("wallet_challenges").select("nonce").where("expires_at", "<=", now).limit(limit))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  },

  /** Marks an unexpired, unused challenge used; returns it, or undefined if it could not be claimed. */
  claimChallenge: (db: IdentityDb, nonce: string, now: Date) =>
    db
      .updateTable("wallet_challenges")
      .set({ used_at: now })
      .where("nonce", "=", nonce)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .returningAll()
      .executeTakeFirst(),

  findSignerWallet: (db: IdentityDb, family: string, address: string) =>
    db
      .selectFrom("payout_wallets")
      .selectAll()
      .where("chain_family", "=", family)
      .where("address", "=", address)
      .where("verified", "=", true)
      .executeTakeFirst(),

  insertAccount: (db: IdentityDb, row: Pick<AccountRow, "id" | "created_at">) => db.insertInto("accounts").values(row).execute(),

  findAccount: (db: IdentityDb, id: string) => db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst(),

  insertPayoutWallet: (db: IdentityDb, row: PayoutWalletRow) => db.insertInto("payout_wallets").values(row).execute(),

  listPayoutWallets: (db: IdentityDb, accountId: string) =>
    db.selectFrom("payout_wallets").selectAll().where("account_id", "=", accountId).orderBy("created_at").execute(),

  insertApiKey: (db: IdentityDb, row: Omit<ApiKeyRow, "created_at" | "revoked_at" | "last_used_at">) =>
    db.insertInto("api_keys").values(row).returningAll().executeTakeFirstOrThrow(),

  findApiKeyByHash: (db: IdentityDb, hash: string) => db.selectFrom("api_keys").selectAll().where("secret_hash", "=", hash).executeTakeFirst(),

  touchApiKey: (db: IdentityDb, id: string, now: Date) => db.updateTable("api_keys").set({ last_used_at: now }).where("id", "=", id).execute(),

  /** A keyset page of the account's keys, newest first (index api_keys_account_page). */
  listApiKeys: (db: IdentityDb, accountId: string, page: ApiKeyPage) => {
    let q = db.selectFrom("api_keys").selectAll().where("account_id", "=", accountId);
    const after = page.after;
    if (after) q = q.where((eb) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)));
    return q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.size).execute();
  },

  insertSession: (db: IdentityDb, row: Omit<SessionRow, "created_at" | "revoked_at" | "via"> & { via: SessionVia }) =>
    db.insertInto("sessions").values(row).returningAll().executeTakeFirstOrThrow(),

  findSessionByHash: (db: IdentityDb, hash: string) => db.selectFrom("sessions").selectAll().where("token_hash", "=", hash).executeTakeFirst(),

  /** The account's session, locked for a change in the caller's transaction; undefined when the account has no such session. */
  lockSession: (db: IdentityDb, accountId: string, sessionId: string) =>
    db.selectFrom("sessions").selectAll().where("id", "=", sessionId).where("account_id", "=", accountId).forUpdate().executeTakeFirst(),

  revokeSession: (db: IdentityDb, sessionId: string, now: Date) =>
    db.updateTable("sessions").set({ revoked_at: now }).where("id", "=", sessionId).returningAll().executeTakeFirstOrThrow(),

  /** Deletes at most `limit` expired sessions, like deleteExpiredChallenges. */
  deleteExpiredSessions: async (db: IdentityDb, now: Date, limit: number) => {
    const r = await db
      .deleteFrom("sessions")
      .where("id", "in", (eb) => eb.selectFrom("sessions").select("id").where("expires_at", "<=", now).limit(limit))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  },

  /** Records an account event; a second write of the same event id is a no-op (bus redelivery). */
  insertAccountEvent: (db: IdentityDb, row: AccountEventRow) =>
    db
      .insertInto("account_events")
      .values({ ...row, detail: JSON.stringify(row.detail) as unknown as Record<string, unknown> })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute(),

  findAccountEvent: (db: IdentityDb, accountId: string, id: string) =>
    db.selectFrom("account_events").select(["id", "at"]).where("account_id", "=", accountId).where("id", "=", id).executeTakeFirst(),

  /** A keyset page of the account's events, newest first (index account_events_page). */
  listAccountEvents: (db: IdentityDb, accountId: string, page: AccountEventPage) => {
    let q = db.selectFrom("account_events").selectAll().where("account_id", "=", accountId);
    if (page.actionPrefix) q = q.where(sql<boolean>`starts_with(action, ${page.actionPrefix})`);
    const before = page.before;
    if (before?.id !== undefined) {
      const id = before.id;
      q = q.where((eb) => eb(eb.refTuple("at", "id"), "<", eb.tuple(before.at, id)));
    } else if (before) q = q.where("at", "<", before.at);
    return q.orderBy("at", "desc").orderBy("id", "desc").limit(page.size).execute();
  },

  /** The account's key, locked for a change in the caller's transaction; undefined when the account has no such key. */
  lockApiKey: (db: IdentityDb, accountId: string, id: string) =>
    db.selectFrom("api_keys").selectAll().where("id", "=", id).where("account_id", "=", accountId).forUpdate().executeTakeFirst(),

  revokeApiKey: (db: IdentityDb, id: string, now: Date) =>
    db.updateTable("api_keys").set({ revoked_at: now }).where("id", "=", id).returningAll().executeTakeFirstOrThrow(),

  findProfile: (db: IdentityDb, accountId: string) => db.selectFrom("profiles").selectAll().where("account_id", "=", accountId).executeTakeFirst(),

  /** The profile holding a public slug (unique index profiles_slug). */
  findProfileBySlug: (db: IdentityDb, slug: string) => db.selectFrom("profiles").selectAll().where("slug", "=", slug).executeTakeFirst(),

  /** Gives an existing account its (empty) profile row, dated like the account; nothing when it has one or there is no such account. */
  ensureProfile: (db: IdentityDb, accountId: string) =>
    db
      .insertInto("profiles")
      .columns(["account_id", "created_at", "updated_at"])
      .expression((eb) => eb.selectFrom("accounts").select(["id", "created_at", "created_at"]).where("id", "=", accountId))
      .onConflict((oc) => oc.column("account_id").doNothing())
      .execute(),

  /** The account's profile, locked for a change in the caller's transaction. */
  lockProfile: (db: IdentityDb, accountId: string) => db.selectFrom("profiles").selectAll().where("account_id", "=", accountId).forUpdate().executeTakeFirst(),

  /** Writes a change; a slug another account holds fails on the unique index profiles_slug (SQLSTATE 23505). */
  updateProfile: (db: IdentityDb, accountId: string, change: ProfileChange) =>
    db
      .updateTable("profiles")
      .set({
        ...change,
        ...(change.social_links !== undefined ? { social_links: JSON.stringify(change.social_links) as unknown as Record<string, string> } : {}),
      })
      .where("account_id", "=", accountId)
      .returningAll()
      .executeTakeFirstOrThrow(),
};
