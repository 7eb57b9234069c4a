import type { IdentityDb, PayoutWalletRow } from "./identity-store";

/** Queries of the standing payout wallets (PUT /v1/account/wallets); the rows are identity-store's `payout_wallets`. */
export const payoutWalletStore = {
  /** The account, locked so that two changes of its wallets run one after the other; undefined when there is no such account. */
  lockAccount: (db: IdentityDb, accountId: string) => db.selectFrom("accounts").select("id").where("id", "=", accountId).forUpdate().executeTakeFirst(),

  /** Every wallet of the account, oldest first. */
  list: (db: IdentityDb, accountId: string): Promise<PayoutWalletRow[]> =>
    db
      .selectFrom("payout_wallets")
      .select(["account_id", "chain_family", "address", "verified", "is_default"])
      .where("account_id", "=", accountId)
      .orderBy("created_at")
      .orderBy("address")
      .execute(),

  clearDefaults: (db: IdentityDb, accountId: string) =>
    db.updateTable("payout_wallets").set({ is_default: false }).where("account_id", "=", accountId).where("is_default", "=", true).execute(),

  /** Removes one wallet; a verified one (a sign-in credential) is never removed. */
  removeUnverified: (db: IdentityDb, w: Pick<PayoutWalletRow, "account_id" | "chain_family" | "address">) =>
    db
      .deleteFrom("payout_wallets")
      .where("account_id", "=", w.account_id)
      .where("chain_family", "=", w.chain_family)
      .where("address", "=", w.address)
      .where("verified", "=", false)
      .execute(),

  /** Makes the address the family's default: an existing row (verified or not) keeps its flag, a new one is unverified. */
  makeDefault: (db: IdentityDb, w: Pick<PayoutWalletRow, "account_id" | "chain_family" | "address">) =>
    db
      .insertInto("payout_wallets")
      .values({ ...w, verified: false, is_default: true })
      .onConflict((oc) => oc.columns(["account_id", "chain_family", "address"]).doUpdateSet({ is_default: true }))
      .execute(),
};
