import { sql, type Migration } from "@c402/db";

/**
 * One row per escrow, keyed by the deposit's payment id: its checkout and
 * account, the chain and terms it froze, its state and the moments its
 * windows count from, and the next deadline (what the sweeper will scan).
 * Created ahead of the deposits that will fill it (the escrow checkout
 * slice), so that slice starts from this shape; no row exists yet.
 */
export const escrows: Migration = {
  async up(db) {
    await db.schema
      .createTable("escrows")
      .addColumn("payment_id", "text", (c) => c.primaryKey())
      .addColumn("checkout_id", "text", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("network", "text", (c) => c.notNull())
      .addColumn("contract_address", "text", (c) => c.notNull())
      .addColumn("payer", "text", (c) => c.notNull())
      .addColumn("total", "bigint", (c) => c.notNull())
      .addColumn("preset", "text", (c) => c.notNull().check(sql`preset in ('instant', 'standard', 'shipping', 'custom')`))
      .addColumn("settle_seconds", "integer", (c) => c.notNull())
      .addColumn("hold_seconds", "integer", (c) => c.notNull())
      .addColumn("backstop_seconds", "integer", (c) => c.notNull())
      .addColumn("arbiter", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('held', 'on_hold', 'escalated', 'released', 'refunded')`))
      .addColumn("handoff_id", "text")
      .addColumn("test_mode", "boolean", (c) => c.notNull())
      .addColumn("deposit_tx_hash", "text", (c) => c.notNull())
      .addColumn("deposited_at", "timestamptz(3)", (c) => c.notNull())
      .addColumn("on_hold_at", "timestamptz(3)")
      .addColumn("escalated_at", "timestamptz(3)")
      .addColumn("closed_at", "timestamptz(3)")
      .addColumn("deadline_at", "timestamptz(3)")
      .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("escrows_account_state").on("escrows").columns(["account_id", "state", "deposited_at"]).execute();
    await db.schema.createIndex("escrows_checkout").on("escrows").column("checkout_id").execute();
    await db.schema.createIndex("escrows_due").on("escrows").column("deadline_at").where(sql.ref("deadline_at"), "is not", null).execute();
  },
};
