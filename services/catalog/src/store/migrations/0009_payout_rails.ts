import { sql, type Migration } from "@c402/db";

/**
 * A checkout's payout rails beyond `pay_to` (its EVM rail): the address per
 * other chain family (`{"solana": "...", "stellar": "..."}`), copied from the
 * account's standing wallets at create (inherit_account_payouts) or added
 * later (POST /v1/checkouts/{id}/payouts, additive only). Existing checkouts
 * have none.
 */
export const checkoutPayoutRails: Migration = {
  async up(db) {
    await db.schema
      .alterTable("checkouts")
      .addColumn("payout_rails", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .execute();
  },
};
