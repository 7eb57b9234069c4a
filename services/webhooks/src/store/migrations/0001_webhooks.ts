import { sql, type Migration } from "@c402/db";

export const webhooksInitial: Migration = {
  async up(db) {
    await db.schema
      .createTable("recorded_events")
      .addColumn("event_id", "text", (c) => c.primaryKey())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("aggregate_id", "text", (c) => c.notNull())
      .addColumn("test_mode", "boolean", (c) => c.notNull())
      .addColumn("payload", "bytea", (c) => c.notNull())
      .addColumn("occurred_at", "timestamptz", (c) => c.notNull())
      .addColumn("recorded_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema.createIndex("recorded_events_account").on("recorded_events").columns(["account_id", "occurred_at"]).execute();
  },
};
