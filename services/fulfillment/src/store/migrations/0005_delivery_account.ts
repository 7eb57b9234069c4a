import { sql, type Migration } from "@c402/db";

/** Deliveries name their seller's account, so an account's failed deliveries can be counted (GET /v1/analytics); older rows have none. */
export const deliveryAccount: Migration = {
  async up(db) {
    await db.schema.alterTable("deliveries").addColumn("account_id", "text").execute();
    await db.schema
      .createIndex("deliveries_account_failures")
      .on("deliveries")
      .columns(["account_id", "started_at"])
      .where(sql<boolean>`outcome = 'origin_failed'`)
      .execute();
  },
};
