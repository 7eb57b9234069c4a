import { sql, type Migration } from "@c402/db";

/** Webhook sales: the seller closes each one out (fulfilled_at); the ones still open are listed per account, newest first. */
export const webhookFulfilment: Migration = {
  async up(db) {
    await db.schema.alterTable("payments").addColumn("fulfilled_at", "timestamptz").execute();
    await db.schema
      .createIndex("payments_awaiting_fulfilment")
      .on("payments")
      .columns(["account_id", "settled_at", "id"])
      .where(sql<boolean>`fulfillment = 'webhook' and status = 'settled' and fulfilled_at is null`)
      .execute();
  },
};
