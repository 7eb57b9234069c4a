import { sql, type Migration } from "@c402/db";

/** A payment's parties as JSON text (`json`, not `jsonb`, which reorders keys), so receipts carry them verbatim. */
export const paymentPartiesAsSent: Migration = {
  async up(db) {
    // jsonb to json is an assignment cast: no USING clause needed.
    await db.schema
      .alterTable("payments")
      .alterColumn("parties", (c) => c.setDataType(sql`json`))
      .execute();
  },
};
