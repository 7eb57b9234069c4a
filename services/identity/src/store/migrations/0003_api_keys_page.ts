import type { Migration } from "@c402/db";

/**
 * Keys are listed by keyset, newest first: `(created_at, id) < (after)` within
 * one account. The cursor carries created_at as a JavaScript date (millisecond
 * precision) while `now()` stores microseconds, so a cursor would not name its
 * row exactly; created_at is kept to milliseconds from now on (existing values
 * round to the nearest millisecond). The index serves the list order directly.
 */
export const apiKeysPageIndex: Migration = {
  async up(db) {
    await db.schema
      .alterTable("api_keys")
      .alterColumn("created_at", (c) => c.setDataType("timestamptz(3)"))
      .execute();
    await db.schema.createIndex("api_keys_account_page").on("api_keys").columns(["account_id", "created_at desc", "id desc"]).execute();
    await db.schema.dropIndex("api_keys_account").execute();
  },
};
