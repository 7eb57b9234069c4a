import { sql, type Migration } from "@c402/db";

/**
 * The parties a checkout declares, and the answer an idempotency key replays,
 * are kept as JSON text (`json`), not `jsonb`: jsonb reorders an object's keys,
 * so receipts would not carry the parties verbatim and a replay would not be
 * byte-identical to the first answer. Rows stored before keep jsonb's order.
 */
export const partiesAsSent: Migration = {
  async up(db) {
    // jsonb to json is an assignment cast: no USING clause needed.
    await db.schema
      .alterTable("checkouts")
      .alterColumn("parties", (c) => c.setDataType(sql`json`))
      .execute();
    await db.schema
      .alterTable("idempotency_keys")
      .alterColumn("snapshot", (c) => c.setDataType(sql`json`))
      .execute();
  },
};
