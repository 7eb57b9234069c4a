import { sql, type Migration } from "@c402/db";

/**
 * Live settlement is a persisted saga on the payment row: claimed -> settling
 * (transaction signed, hash recorded before broadcast) -> settled | failed.
 */
export const liveSettlement: Migration = {
  async up(db) {
    await db.schema
      .alterTable("payments")
      .addColumn("raw_tx", "text")
      .addColumn("split_address", "text")
      .addColumn("single_shot", "boolean", (c) => c.notNull().defaultTo(false))
      .addColumn("failure_reason", "text")
      .addColumn("valid_before", "bigint")
      .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .alterTable("payments")
      .alterColumn("settled_at", (c) => c.dropNotNull())
      .execute();
    await db.schema
      .alterTable("payments")
      .alterColumn("tx_hash", (c) => c.dropNotNull())
      .execute();
    // A single-shot checkout sells once: at most one live payment that is not failed.
    await db.schema
      .createIndex("payments_single_shot_once")
      .on("payments")
      .column("checkout_id")
      .unique()
      .where(sql<boolean>`single_shot and not test_mode and status <> 'failed'`)
      .execute();
    await db.schema
      .createIndex("payments_unfinished")
      .on("payments")
      .columns(["status", "updated_at"])
      .where(sql<boolean>`status in ('claimed', 'settling')`)
      .execute();
  },
};
