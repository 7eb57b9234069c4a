import { sql, type Migration } from "@c402/db";

export const paymentsInitial: Migration = {
  async up(db) {
    await db.schema
      .createTable("payments")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("checkout_id", "text", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("checkout_title", "text", (c) => c.notNull())
      .addColumn("network", "text", (c) => c.notNull())
      .addColumn("asset", "text", (c) => c.notNull())
      .addColumn("payer", "text", (c) => c.notNull())
      .addColumn("nonce", "text", (c) => c.notNull())
      .addColumn("authorization", "jsonb", (c) => c.notNull())
      .addColumn("price_atomic", "bigint", (c) => c.notNull())
      .addColumn("provider_amount", "bigint", (c) => c.notNull())
      .addColumn("platform_amount", "bigint")
      .addColumn("fee_amount", "bigint", (c) => c.notNull())
      .addColumn("total", "bigint", (c) => c.notNull())
      .addColumn("pay_to", "text", (c) => c.notNull())
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("tx_hash", "text", (c) => c.notNull())
      .addColumn("test_mode", "boolean", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("delivery_outcome", "text", (c) => c.notNull())
      .addColumn("handoff_id", "text")
      .addColumn("sold_by", "text")
      .addColumn("settled_at", "timestamptz", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    // One EIP-3009 authorization pays once: (payer, nonce) per token, per ledger.
    await db.schema.createIndex("payments_authorization").on("payments").columns(["test_mode", "network", "asset", "payer", "nonce"]).unique().execute();
    await db.schema.createIndex("payments_checkout").on("payments").columns(["checkout_id", "settled_at"]).execute();
  },
};
