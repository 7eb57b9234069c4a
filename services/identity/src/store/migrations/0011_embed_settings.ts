import { sql, type Migration } from "@c402/db";

/**
 * Embed settings (GET and PUT /v1/account/embed): the origins allowed to
 * frame the account's pay pages and receipts. One row per account that ever
 * set them; an account without a row allows none (nothing may frame).
 */
export const embedSettings: Migration = {
  async up(db) {
    await db.schema
      .createTable("embed_settings")
      .addColumn("account_id", "text", (c) => c.primaryKey().references("accounts.id"))
      .addColumn("embed_origins", "jsonb", (c) => c.notNull())
      .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
};
