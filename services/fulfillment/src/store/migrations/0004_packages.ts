import { sql, type Migration } from "@c402/db";

/**
 * Packages of calls: one row per package (under the payment that bought it,
 * found by its key's SHA-256; the key itself is never stored), with how its
 * origin is called, and every call spent from it in order (`seq`), counted
 * or refunded. The allowance only changes in the statement that records a
 * call's start or its refund, so it is never lost or doubled.
 */
export const packages: Migration = {
  async up(db) {
    await db.schema
      .createTable("packages")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("key_hash", "text", (c) => c.notNull().unique())
      .addColumn("payment_id", "text", (c) => c.notNull().unique())
      .addColumn("checkout_id", "text", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("test_mode", "boolean", (c) => c.notNull())
      .addColumn("calls_included", "integer", (c) => c.notNull().check(sql`calls_included >= 1`))
      .addColumn("calls_used", "integer", (c) => c.notNull())
      .addColumn("last_seq", "integer", (c) => c.notNull())
      .addColumn("price_atomic", "bigint", (c) => c.notNull())
      .addColumn("origin_url", "text", (c) => c.notNull())
      .addColumn("origin_method", "text", (c) => c.notNull())
      .addColumn("origin_key_id", "text")
      .addColumn("one_off_credential", "boolean", (c) => c.notNull())
      .addColumn("mcp", "boolean", (c) => c.notNull())
      .addColumn("mcp_tool", "text")
      .addColumn("test_delivery_daily_cap", "integer", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addColumn("expires_at", "timestamptz")
      .addCheckConstraint("packages_allowance", sql`calls_used >= 0 and calls_used <= calls_included`)
      .execute();
    await db.schema.createIndex("packages_checkout").on("packages").columns(["checkout_id", "expires_at"]).execute();
    await db.schema
      .createTable("package_calls")
      .addColumn("package_id", "text", (c) => c.notNull())
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("at", "timestamptz", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('calling', 'done')`))
      .addColumn("counted", "boolean", (c) => c.notNull())
      .addColumn("status", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("fault", "text", (c) => c.check(sql`fault in ('seller', 'buyer', 'platform')`))
      .addColumn("latency_ms", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("bytes", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("deadline_at", "timestamptz", (c) => c.notNull())
      .addPrimaryKeyConstraint("package_calls_pk", ["package_id", "seq"])
      .execute();
    await db.schema
      .createIndex("package_calls_under_way")
      .on("package_calls")
      .column("deadline_at")
      .where(sql<boolean>`state = 'calling'`)
      .execute();
  },
};
