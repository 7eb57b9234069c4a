import { sql, type Migration } from "@c402/db";

/**
 * One row per series (keyed by the sch_ id payments minted with period 0's
 * payment) and one per period: its window and nonce as payments recorded
 * them, its status, and the scheduler's bookkeeping (attempts, the next
 * attempt, the lease of the replica charging it now). The signed
 * authorizations themselves stay in payments (ADR 20).
 */
export const schedulesInitial: Migration = {
  async up(db) {
    await db.schema
      .createTable("schedules")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("checkout_id", "text", (c) => c.notNull())
      .addColumn("payer", "text", (c) => c.notNull())
      .addColumn("network", "text", (c) => c.notNull())
      .addColumn("test_mode", "boolean", (c) => c.notNull())
      .addColumn("interval_days", "integer", (c) => c.notNull())
      .addColumn("periods", "integer", (c) => c.notNull().check(sql`periods between 2 and 24`))
      .addColumn("amount_usd", "text", (c) => c.notNull())
      .addColumn("total", "bigint", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('active', 'completed', 'cancelled', 'lapsed')`))
      .addColumn("created_at", "timestamptz(3)", (c) => c.notNull())
      .addColumn("ended_at", "timestamptz(3)")
      .addColumn("cancelled_by", "text", (c) => c.check(sql`cancelled_by in ('buyer', 'seller', 'system')`))
      .addColumn("cancel_reason", "text")
      .execute();
    // The seller's list: one account and mode, newest first, paged by (created_at, id).
    await db.schema.createIndex("schedules_account_list").on("schedules").columns(["account_id", "test_mode", "created_at desc", "id desc"]).execute();
    await db.schema
      .createTable("schedule_periods")
      .addColumn("schedule_id", "text", (c) => c.notNull().references("schedules.id"))
      .addColumn("period", "integer", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('settled', 'scheduled', 'due', 'retrying', 'lapsed', 'cancelled')`))
      .addColumn("valid_after", "timestamptz(3)", (c) => c.notNull())
      .addColumn("valid_before", "timestamptz(3)", (c) => c.notNull())
      // Period 0's nonce is payments' own (the purchase); a held period's is 0x and 64 hex.
      .addColumn("nonce", "text")
      .addColumn("payment_id", "text")
      .addColumn("settled_at", "timestamptz(3)")
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("last_failure", "text")
      .addColumn("failure_notified", "boolean", (c) => c.notNull().defaultTo(false))
      .addColumn("next_attempt_at", "timestamptz(3)")
      .addColumn("lease_until", "timestamptz(3)")
      .addColumn("cancelled_onchain", "boolean", (c) => c.notNull().defaultTo(false))
      .addPrimaryKeyConstraint("schedule_periods_pk", ["schedule_id", "period"])
      .execute();
    // What the scheduler scans: the periods still to charge, by when their window opens.
    await db.schema
      .createIndex("schedule_periods_chargeable")
      .on("schedule_periods")
      .column("valid_after")
      .where(sql.ref("status"), "in", sql`('scheduled', 'due', 'retrying')`)
      .execute();
    await db.schema.createIndex("schedule_periods_nonce").on("schedule_periods").column("nonce").execute();
  },
};
