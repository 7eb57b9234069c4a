import { sql, type Migration } from "@c402/db";

export const catalogInitial: Migration = {
  async up(db) {
    await db.schema
      .createTable("checkouts")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("title", "text", (c) => c.notNull())
      .addColumn("description", "text")
      .addColumn("price_atomic", "bigint", (c) => c.notNull().check(sql`price_atomic > 0`))
      .addColumn("pay_to", "text", (c) => c.notNull())
      .addColumn("fulfillment", "text", (c) => c.notNull())
      .addColumn("payload_json", "text")
      .addColumn("reusable", "boolean", (c) => c.notNull())
      .addColumn("armed", "boolean", (c) => c.notNull())
      .addColumn("armed_at", "timestamptz")
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("offer", "jsonb", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addColumn("expires_at", "timestamptz")
      .execute();
    await db.schema.createIndex("checkouts_account_created").on("checkouts").columns(["account_id", "created_at"]).execute();
    await db.schema
      .createTable("idempotency_keys")
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("key", "text", (c) => c.notNull())
      .addColumn("fingerprint", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("checkout_id", "text")
      // The checkout as first returned, so a replay answers exactly that.
      .addColumn("snapshot", "jsonb")
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addPrimaryKeyConstraint("idempotency_keys_pk", ["account_id", "key"])
      .execute();
  },
};
