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
}

export type IdentityDb = Kysely<IdentityTables>;

export const identityStore = {
  insertChallenge: (db: IdentityDb, row: Omit<ChallengeRow, "used_at">) => db.insertInto("wallet_challenges").values(row).execute(),

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

  listApiKeys: (db: IdentityDb, accountId: string) =>
    db.selectFrom("api_keys").selectAll().where("account_id", "=", accountId).orderBy("created_at", "desc").orderBy("id").execute(),

  revokeApiKey: (db: IdentityDb, accountId: string, id: string, now: Date) =>
    db
      .updateTable("api_keys")
      .set((eb) => ({ revoked_at: eb.fn.coalesce("revoked_at", eb.val(now)) }))
      .where("id", "=", id)
      .where("account_id", "=", accountId)
      .returningAll()
      .executeTakeFirst(),
};
