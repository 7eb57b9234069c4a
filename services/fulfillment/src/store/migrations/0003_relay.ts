import { sql, type Migration } from "@c402/db";

/**
 * Relay checkouts: the one-off credential a checkout was created with (sealed
 * with the checkout's id as associated data), every delivery under the id of
 * the payment it is for (the at-most-once record the purchase saga resumes
 * from), and the rehearsal deliveries counted per checkout per UTC day.
 */
export const relayDeliveries: Migration = {
  async up(db) {
    await db.schema
      .createTable("checkout_credentials")
      .addColumn("checkout_id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("auth_type", "text", (c) => c.notNull().check(sql`auth_type in ('bearer', 'basic', 'api_key', 'custom')`))
      .addColumn("header_name", "text")
      .addColumn("sealed_value", "text", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("deliveries")
      .addColumn("payment_id", "text", (c) => c.primaryKey())
      .addColumn("checkout_id", "text")
      .addColumn("test_mode", "boolean", (c) => c.notNull().defaultTo(false))
      .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('calling', 'done', 'abandoned')`))
      .addColumn("outcome", "text")
      .addColumn("charged", "boolean", (c) => c.notNull().defaultTo(false))
      .addColumn("status", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("content_type", "text")
      .addColumn("body", "bytea")
      .addColumn("latency_ms", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("bytes", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("reason", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("started_at", "timestamptz", (c) => c.notNull())
      .addColumn("deadline_at", "timestamptz", (c) => c.notNull())
      .addColumn("finished_at", "timestamptz")
      .execute();
    await db.schema.createIndex("deliveries_checkout").on("deliveries").columns(["checkout_id", "started_at"]).execute();
    await db.schema
      .createTable("test_delivery_counts")
      .addColumn("checkout_id", "text", (c) => c.notNull())
      .addColumn("day", "date", (c) => c.notNull())
      .addColumn("count", "integer", (c) => c.notNull())
      .addPrimaryKeyConstraint("test_delivery_counts_pk", ["checkout_id", "day"])
      .execute();
  },
};
