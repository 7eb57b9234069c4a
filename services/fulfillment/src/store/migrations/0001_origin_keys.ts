import { sql, type Migration } from "@c402/db";

/**
 * Origin keys (sealed values; the key's id is the associated data, so a
 * value moved to another row does not open) and which checkouts reference
 * each one (written when relay and mcp checkouts are created).
 */
export const originKeysInitial: Migration = {
  async up(db) {
    await db.schema
      .createTable("origin_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("name", "text")
      .addColumn("auth_type", "text", (c) => c.notNull().check(sql`auth_type in ('bearer', 'basic', 'api_key', 'custom')`))
      .addColumn("header_name", "text")
      .addColumn("sealed_value", "text", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addColumn("rotated_at", "timestamptz")
      .addColumn("revoked_at", "timestamptz")
      .addCheckConstraint("origin_keys_header_needed", sql`(auth_type in ('api_key', 'custom')) = (header_name is not null)`)
      .execute();
    await db.schema.createIndex("origin_keys_account_page").on("origin_keys").columns(["account_id", "created_at", "id"]).execute();
    await db.schema
      .createTable("origin_key_uses")
      .addColumn("origin_key_id", "text", (c) => c.notNull().references("origin_keys.id"))
      .addColumn("checkout_id", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("origin_key_uses_pk", ["origin_key_id", "checkout_id"])
      .execute();
  },
};
