import { sql, type Migration } from "@c402/db";

/**
 * Standing payout wallets (PUT /v1/account/wallets): at most one default
 * wallet per account and chain family, the one a checkout copies at create.
 * The index keeps that true also when two changes race (each one also locks
 * the account row). The families are the CAIP-2 namespaces the service knows.
 */
export const payoutWalletDefaults: Migration = {
  async up(db) {
    await db.schema
      .createIndex("payout_wallets_default")
      .on("payout_wallets")
      .columns(["account_id", "chain_family"])
      .unique()
      .where(sql.ref("is_default"), "=", true)
      .execute();
    await db.schema
      .alterTable("payout_wallets")
      .addCheckConstraint("payout_wallets_family", sql`chain_family in ('eip155', 'solana', 'stellar')`)
      .execute();
  },
};
