import type { Migration } from "@c402/db";

/**
 * Passes are signed strings, never rows; only a pass with a use limit gets a
 * row here, counting its reads, kept until it expires (identity held this
 * table before content-grants existed: its migration 0014 moves the rows).
 */
export const passUses: Migration = {
  async up(db) {
    await db.schema
      .createTable("pass_uses")
      .addColumn("pass_id", "text", (c) => c.primaryKey())
      .addColumn("used", "integer", (c) => c.notNull())
      .addColumn("expires_at", "timestamptz(3)", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("pass_uses_expiry").on("pass_uses").column("expires_at").execute();
  },
};
