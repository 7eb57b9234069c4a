import { sql, type Migration } from "@c402/db";

/**
 * An idempotency key's claim carries a token and the instant it was taken.
 * A create commits its checkout only while its own claim still holds the key
 * (the token matches, in the same transaction), so a claim left behind by a
 * process that died mid-create can be taken over once its lease has run out
 * without any chance of two executions. Claims made before this migration get
 * no token: they finished or died long ago, and a takeover replaces them.
 * created_at is indexed for the reaper that drops keys past their retention.
 */
export const idempotencyClaims: Migration = {
  async up(db) {
    await db.schema.alterTable("idempotency_keys").addColumn("claim_token", "text").execute();
    await db.schema.alterTable("idempotency_keys").addColumn("claimed_at", "timestamptz").execute();
    await db
      .updateTable("idempotency_keys")
      .set({ claimed_at: sql`created_at` })
      .execute();
    await db.schema
      .alterTable("idempotency_keys")
      .alterColumn("claimed_at", (c) => c.setNotNull())
      .execute();
    await db.schema.createIndex("idempotency_keys_created_at").on("idempotency_keys").column("created_at").execute();
  },
};
