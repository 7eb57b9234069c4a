import type { Migration } from "@c402/db";

/** The parties a platform declared on the checkout, copied onto each payment as sold: receipts carry them verbatim. */
export const paymentParties: Migration = {
  async up(db) {
    await db.schema.alterTable("payments").addColumn("parties", "jsonb").execute();
  },
};
