import { sql, type Migration } from "@c402/db";

/**
 * A seller's public catalogue lists what sells, newest first by keyset:
 * armed, not void, not a sold single-shot. This partial index holds exactly
 * those checkouts in that order, so a page costs the same however many
 * checkouts the account retired or sold; the deadline (which depends on the
 * clock) is checked on the rows it yields.
 */
export const offersIndex: Migration = {
  async up(db) {
    await db.schema
      .createIndex("checkouts_selling_page")
      .on("checkouts")
      .columns(["account_id", "created_at desc", "id desc"])
      .where(sql<boolean>`voided_at is null and status = 'open' and armed`)
      .execute();
  },
};
