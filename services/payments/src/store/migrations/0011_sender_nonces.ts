import type { Migration } from "@c402/db";

/**
 * The next nonce of each key that signs transactions here, per chain. Every
 * replica of payments signs with the same facilitator key, so the count lives
 * in the database: a signature takes the row's lock, and the nonce it used is
 * counted in the same commit that records the signed transaction (ADR 11).
 */
export const senderNonces: Migration = {
  async up(db) {
    await db.schema
      .createTable("sender_nonces")
      .addColumn("chain_id", "bigint", (c) => c.notNull())
      .addColumn("address", "text", (c) => c.notNull())
      .addColumn("next_nonce", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "timestamptz", (c) => c.notNull())
      .addPrimaryKeyConstraint("sender_nonces_pk", ["chain_id", "address"])
      .execute();
  },
};
