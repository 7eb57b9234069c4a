import type { Migration } from "@c402/db";

/**
 * Test twins of the retired twin-row model (spec, Payment rules 6): a twin
 * was a checkout row of its own whose URL was the live checkout's rehearsal
 * face. Its URLs now answer 307 to /c/{live_id}/test. Rows come with the data
 * an installation imports from that model; nothing here creates twins.
 */
export const retiredTwins: Migration = {
  async up(db) {
    await db.schema
      .createTable("retired_twins")
      .addColumn("twin_id", "text", (c) => c.primaryKey())
      .addColumn("live_id", "text", (c) => c.notNull().references("checkouts.id"))
      .execute();
  },
};
