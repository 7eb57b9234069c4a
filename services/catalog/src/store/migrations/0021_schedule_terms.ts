import { sql, type Migration } from "@c402/db";

/**
 * Recurring series (ADR 20): a series checkout's terms, frozen at create
 * ({interval_days, periods}); null for every other checkout. A series is
 * never an escrow checkout or twin, a package or gated content.
 * Existing checkouts are not series.
 */
export const scheduleTerms: Migration = {
  async up(db) {
    await db.schema.alterTable("checkouts").addColumn("schedule", "jsonb").execute();
    await db.schema
      .alterTable("checkouts")
      .addCheckConstraint(
        "checkouts_schedule_terms",
        sql`schedule is null or (escrow is null and escrow_twin_id is null and max_deliveries is null and content_json is null)`,
      )
      .execute();
  },
};
