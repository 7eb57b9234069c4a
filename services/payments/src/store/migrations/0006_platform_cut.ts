import type { Migration } from "@c402/db";

/**
 * The platform cut a payment was sold with (the checkout's, frozen at its
 * create): the split contract a live payment settles through is derived from
 * it, so a resumed settlement rebuilds the same split from the row alone.
 */
export const paymentPlatformCut: Migration = {
  async up(db) {
    await db.schema
      .alterTable("payments")
      .addColumn("platform_fee_bps", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("platform_fee_to", "text")
      .execute();
  },
};
