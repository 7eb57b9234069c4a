import { sql, type Migration } from "@c402/db";

/**
 * Platform mode (GET and PUT /v1/account/platform): one row per account that
 * ever set it; an account without a row is not a platform. The checks keep
 * the rules the API enforces true of every row: a fee within 0 to 2000 basis
 * points, and a fee above 0 only for a platform with a wallet to receive it.
 */
export const platformSettings: Migration = {
  async up(db) {
    await db.schema
      .createTable("platform_settings")
      .addColumn("account_id", "text", (c) => c.primaryKey().references("accounts.id"))
      .addColumn("platform_account", "boolean", (c) => c.notNull())
      .addColumn("platform_fee_bps", "integer", (c) => c.notNull())
      .addColumn("platform_fee_to", "text")
      .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
      .addCheckConstraint("platform_settings_bps", sql`platform_fee_bps between 0 and 2000`)
      .addCheckConstraint("platform_settings_fee_wallet", sql`platform_fee_bps = 0 or (platform_account and platform_fee_to is not null)`)
      .execute();
  },
};
