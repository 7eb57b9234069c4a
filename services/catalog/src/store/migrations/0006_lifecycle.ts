import { sql, type Migration } from "@c402/db";

/**
 * Void is a flag, not a status: `voided_at` marks a retired checkout while
 * `status` keeps what it sold (open or paid), so a restore recomputes the
 * status instead of remembering one. `expiry_recorded_at` marks a deadline
 * whose passing was recorded (its account event written) by the expiry sweep;
 * an extend clears it. The partial index holds exactly the checkouts the sweep
 * still has to look at.
 */
export const checkoutLifecycle: Migration = {
  async up(db) {
    await db.schema.alterTable("checkouts").addColumn("voided_at", "timestamptz").addColumn("expiry_recorded_at", "timestamptz").execute();
    // No endpoint could void before this migration; the statement keeps any such row void all the same.
    await db
      .updateTable("checkouts")
      .set({ voided_at: sql`now()`, status: "open" })
      .where("status", "=", "void")
      .execute();
    await db.schema
      .createIndex("checkouts_expiry_due")
      .on("checkouts")
      .column("expires_at")
      .where(sql<boolean>`expiry_recorded_at is null and voided_at is null and status = 'open' and expires_at is not null`)
      .execute();
  },
};
