import { sql, type Migration } from "@c402/db";

/**
 * Relay sales are paid only on delivery (ADR 9): the saga gains `delivered`
 * (the origin's charged answer is recorded, settlement not yet broadcast)
 * between `claimed` and `settling`, and the row keeps what the receipt shows
 * of the delivery (the origin's status, latency and bytes).
 */
export const paidOnDelivery: Migration = {
  async up(db) {
    await db.schema
      .alterTable("payments")
      .addColumn("fulfillment", "text", (c) => c.notNull().defaultTo("inline"))
      .addColumn("delivery_status", "integer")
      .addColumn("delivery_latency_ms", "integer")
      .addColumn("delivery_bytes", "integer")
      .execute();
    await db.schema.dropIndex("payments_unfinished").execute();
    await db.schema
      .createIndex("payments_unfinished")
      .on("payments")
      .columns(["status", "updated_at"])
      .where(sql<boolean>`status in ('claimed', 'delivered', 'settling')`)
      .execute();
  },
};
