import { sql, type Migration } from "@c402/db";

/**
 * The receipts ledger (GET /v1/receipts and its export): an account's settled
 * payments of one mode, newest first by (settled_at, id), read a keyset page
 * at a time whatever the ledger's size.
 */
export const receiptsLedger: Migration = {
  async up(db) {
    await db.schema
      .createIndex("payments_ledger")
      .on("payments")
      .columns(["account_id", "test_mode", "settled_at desc", "id desc"])
      .where(sql<boolean>`status = 'settled'`)
      .execute();
  },
};
