import { sql, type Migration } from "@c402/db";

/**
 * The platform's fee wallets beyond `platform_fee_to` (its EVM one): the
 * address per other chain family (`{"solana": "..."}`), the platform
 * account's standing payout wallets copied at create when the checkout takes
 * a cut, frozen like `payout_rails`. Existing checkouts have none.
 */
export const platformFeeRails: Migration = {
  async up(db) {
    await db.schema
      .alterTable("checkouts")
      .addColumn("platform_fee_rails", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .execute();
  },
};
