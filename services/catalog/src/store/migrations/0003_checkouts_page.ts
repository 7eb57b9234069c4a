import type { Migration } from "@c402/db";

/**
 * Lists are paged by keyset, newest first: `(created_at, id) < (after)` within
 * one account. This index serves that order directly (and everything the
 * (account_id, created_at) index it replaces served).
 */
export const checkoutsPageIndex: Migration = {
  async up(db) {
    await db.schema.createIndex("checkouts_account_page").on("checkouts").columns(["account_id", "created_at desc", "id desc"]).execute();
    await db.schema.dropIndex("checkouts_account_created").execute();
  },
};
