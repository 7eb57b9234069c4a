import type { Migration } from "@c402/db";

/** A buyer's page polls /c/{id}/handoff/{nonce} until the payment that arrived with that nonce settles. */
export const handoffLookup: Migration = {
  async up(db) {
    await db.schema.createIndex("payments_handoff").on("payments").columns(["checkout_id", "handoff_id"]).execute();
  },
};
