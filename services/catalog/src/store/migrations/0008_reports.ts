import { sql, type Migration } from "@c402/db";

/**
 * Reports on checkouts. `account_id` is the reported checkout's seller, so a
 * seller's lists never join across schemas; `payment` is the copy of the
 * receipt a buyer report names (null for an anonymous one). Lists are keyset
 * pages newest first, per account and per checkout.
 */
export const checkoutReports: Migration = {
  async up(db) {
    await db.schema
      .createTable("reports")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("checkout_id", "text", (c) => c.notNull())
      .addColumn("category", "text", (c) => c.notNull())
      .addColumn("detail", "text")
      .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('buyer', 'anonymous')`))
      .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('open', 'acknowledged', 'resolved')`))
      .addColumn("note", "text")
      .addColumn("payment_id", "text")
      .addColumn("payment", "jsonb")
      .addColumn("test_mode", "boolean", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addColumn("updated_at", "timestamptz", (c) => c.notNull())
      .addColumn("acknowledged_at", "timestamptz")
      .addColumn("resolved_at", "timestamptz")
      .addCheckConstraint("reports_buyer_has_payment", sql`(kind = 'buyer') = (payment_id is not null and payment is not null)`)
      .execute();
    await db.schema.createIndex("reports_account_page").on("reports").columns(["account_id", "created_at desc", "id desc"]).execute();
    await db.schema.createIndex("reports_checkout_page").on("reports").columns(["checkout_id", "created_at desc", "id desc"]).execute();
  },
};
