import { sql, type Migration } from "@c402/db";

/**
 * Wallet sessions (a later wallet sign-in opens one instead of minting a key):
 * only the token's hash is stored. Expired challenges and sessions are purged
 * in bounded batches, which the expiry indexes serve.
 */
export const identitySessions: Migration = {
  async up(db) {
    await db.schema
      .createTable("sessions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("token_hash", "text", (c) => c.notNull().unique())
      .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn("expires_at", "timestamptz", (c) => c.notNull())
      .addColumn("revoked_at", "timestamptz")
      .execute();
    await db.schema.createIndex("sessions_expiry").on("sessions").column("expires_at").execute();
    await db.schema.createIndex("wallet_challenges_expiry").on("wallet_challenges").column("expires_at").execute();
  },
};
