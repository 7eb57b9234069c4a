import { sql, type Migration } from "@c402/db";

export const identityInitial: Migration = {
  async up(db) {
    await db.schema
      .createTable("accounts")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createTable("payout_wallets")
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("chain_family", "text", (c) => c.notNull())
      .addColumn("address", "text", (c) => c.notNull())
      .addColumn("verified", "boolean", (c) => c.notNull())
      .addColumn("is_default", "boolean", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addPrimaryKeyConstraint("payout_wallets_pk", ["account_id", "chain_family", "address"])
      .execute();
    // A verified wallet signs in to exactly one account.
    await db.schema
      .createIndex("payout_wallets_signer")
      .on("payout_wallets")
      .columns(["chain_family", "address"])
      .unique()
      .where(sql.ref("verified"), "=", true)
      .execute();
    await db.schema
      .createTable("api_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("name", "text")
      .addColumn("prefix", "text", (c) => c.notNull())
      .addColumn("secret_hash", "text", (c) => c.notNull().unique())
      .addColumn("scope", "text", (c) => c.notNull())
      .addColumn("mode", "text", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn("revoked_at", "timestamptz")
      .addColumn("last_used_at", "timestamptz")
      .execute();
    await db.schema.createIndex("api_keys_account").on("api_keys").columns(["account_id", "created_at"]).execute();
    await db.schema
      .createTable("wallet_challenges")
      .addColumn("nonce", "text", (c) => c.primaryKey())
      .addColumn("address", "text", (c) => c.notNull())
      .addColumn("network", "text", (c) => c.notNull())
      .addColumn("message", "text", (c) => c.notNull())
      .addColumn("expires_at", "timestamptz", (c) => c.notNull())
      .addColumn("used_at", "timestamptz")
      .execute();
  },
};
