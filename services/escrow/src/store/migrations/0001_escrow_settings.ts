import { sql, type Migration } from "@c402/db";

/**
 * Each account's escrow settings (spec, Escrow: account-level settings); no
 * row: the defaults. Escrow checkouts copy them at create.
 */
export const escrowSettings: Migration = {
  async up(db) {
    await db.schema
      .createTable("escrow_settings")
      .addColumn("account_id", "text", (c) => c.primaryKey())
      .addColumn("policy", "text", (c) => c.notNull().check(sql`policy in ('disabled', 'seller_choice', 'always')`))
      .addColumn("default_preset", "text", (c) => c.notNull().check(sql`default_preset in ('instant', 'standard', 'shipping')`))
      .addColumn("arbiter_evm", "text")
      .addColumn("arbiter_svm", "text")
      .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull())
      .execute();
  },
};
