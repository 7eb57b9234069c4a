import type { Generated, Kysely, Selectable } from "kysely";

export interface AccountRow {
  id: string;
  created_at: Date;
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
}
export type SessionRow = Selectable<SessionsTable>;

export interface ChallengeRow {
  nonce: string;
  address: string;
  network: string;
  message: string;
  expires_at: Date;
  used_at: Date | null;
}

export interface IdentityTables {
  accounts: AccountRow;
  payout_wallets: PayoutWalletsTable;
  api_keys: ApiKeysTable;
  wallet_challenges: ChallengeRow;
  sessions: SessionsTable;
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

  insertAccount: (db: IdentityDb, row: AccountRow) => db.insertInto("accounts").values(row).execute(),

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

  insertSession: (db: IdentityDb, row: Omit<SessionRow, "created_at" | "revoked_at">) =>
    db.insertInto("sessions").values(row).returningAll().executeTakeFirstOrThrow(),

  findSessionByHash: (db: IdentityDb, hash: string) => db.selectFrom("sessions").selectAll().where("token_hash", "=", hash).executeTakeFirst(),

  /** Revokes the account's session (kept revoked at its first revocation time); undefined when the account has no such session. */
  endSession: (db: IdentityDb, accountId: string, sessionId: string, now: Date) =>
    db
      .updateTable("sessions")
      .set((eb) => ({ revoked_at: eb.fn.coalesce("revoked_at", eb.val(now)) }))
      .where("id", "=", sessionId)
      .where("account_id", "=", accountId)
      .returningAll()
      .executeTakeFirst(),

  /** Deletes at most `limit` expired sessions, like deleteExpiredChallenges. */
  deleteExpiredSessions: async (db: IdentityDb, now: Date, limit: number) => {
    const r = await db
      .deleteFrom("sessions")
      .where("id", "in", (eb) => eb.selectFrom("sessions").select("id").where("expires_at", "<=", now).limit(limit))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  },

  revokeApiKey: (db: IdentityDb, accountId: string, id: string, now: Date) =>
    db
      .updateTable("api_keys")
      .set((eb) => ({ revoked_at: eb.fn.coalesce("revoked_at", eb.val(now)) }))
      .where("id", "=", id)
      .where("account_id", "=", accountId)
      .returningAll()
      .executeTakeFirst(),
};
