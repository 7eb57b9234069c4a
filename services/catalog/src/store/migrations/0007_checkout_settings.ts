import type { Migration } from "@c402/db";

/**
 * The create fields a checkout keeps as sent (CheckoutSettings): the parties a
 * platform declared (carried verbatim to receipts), its platform fee, whether
 * it inherits the account's payout wallets, the embed's wallet button and the
 * daily rehearsal budget. Existing checkouts get the defaults.
 */
export const checkoutSettings: Migration = {
  async up(db) {
    await db.schema
      .alterTable("checkouts")
      .addColumn("parties", "jsonb")
      .addColumn("platform_fee_bps", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("inherit_account_payouts", "boolean", (c) => c.notNull().defaultTo(true))
      .addColumn("wallet_button", "boolean", (c) => c.notNull().defaultTo(false))
      .addColumn("test_delivery_daily_cap", "integer", (c) => c.notNull().defaultTo(25))
      .execute();
  },
};
