import { sql, type Migration } from "@c402/db";

/**
 * Account events (GET /v1/account/events): one row per state change of an
 * account, in any service. The id is the event's id, so an event redelivered
 * by the bus is recorded once. `at` is kept to milliseconds, like every keyset
 * order here, so a page cursor names its row exactly; the index serves the
 * newest-first keyset order within one account.
 */
export const accountEvents: Migration = {
  async up(db) {
    await db.schema
      .createTable("account_events")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("action", "text", (c) => c.notNull())
      .addColumn("object_id", "text", (c) => c.notNull())
      .addColumn("detail", "jsonb", (c) => c.notNull())
      .addColumn("actor", "text", (c) => c.notNull())
      .addColumn("test_mode", "boolean", (c) => c.notNull())
      .addColumn("at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema.createIndex("account_events_page").on("account_events").columns(["account_id", "at desc", "id desc"]).execute();
  },
};
