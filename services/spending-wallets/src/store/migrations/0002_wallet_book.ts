import { sql, type Migration } from "@c402/db";

/**
 * The wallet book: wallets (their secret sealed under the service's keyring),
 * limits per account and chain, spends (each a budget reservation, then its
 * outcome) and the wallets' event log.
 */
export const spendingWalletsBook: Migration = {
  async up(db) {
    await db.schema
      .createTable("wallets")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("chain", "text", (c) => c.notNull().check(sql`chain in ('base', 'solana')`))
      .addColumn("network", "text", (c) => c.notNull())
      .addColumn("address", "text", (c) => c.notNull())
      // SecretSealer's sealed JSON of {phrase, private_key, derivation_path}; AAD binds id, account and chain.
      .addColumn("sealed_secret", "text", (c) => c.notNull())
      // The master key that sealed it: the re-wrap sweep finds what is still under a retired one.
      .addColumn("key_id", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('active', 'archived')`))
      .addColumn("created_at", "timestamptz(3)", (c) => c.notNull())
      .addColumn("revealed_at", "timestamptz(3)")
      .addColumn("revealed_by", "text")
      .addColumn("archived_at", "timestamptz(3)")
      // The last balance read was above the nagging threshold (a `flagged` event is recorded on the way up only).
      .addColumn("balance_flagged", "boolean", (c) => c.notNull().defaultTo(false))
      .execute();
    // One active wallet per account and chain; archived ones stay, any number.
    await db.schema.createIndex("wallets_one_active").on("wallets").columns(["account_id", "chain"]).unique().where(sql.ref("status"), "=", "active").execute();
    await db.schema.createIndex("wallets_key_id").on("wallets").column("key_id").execute();

    await db.schema
      .createTable("limits")
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("chain", "text", (c) => c.notNull().check(sql`chain in ('base', 'solana')`))
      .addColumn("per_payment", "bigint", (c) => c.notNull().check(sql`per_payment > 0`))
      .addColumn("per_day", "bigint", (c) => c.notNull().check(sql`per_day > 0`))
      .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull())
      .addPrimaryKeyConstraint("limits_pk", ["account_id", "chain"])
      .addCheckConstraint("limits_payment_within_day", sql`per_payment <= per_day`)
      .execute();

    await db.schema
      .createTable("spends")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("chain", "text", (c) => c.notNull())
      .addColumn("wallet_id", "text", (c) => c.notNull().references("wallets.id"))
      .addColumn("amount", "bigint", (c) => c.notNull().check(sql`amount > 0`))
      .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('reserved', 'confirmed', 'released', 'unknown')`))
      // The UTC day the reservation counts against.
      .addColumn("day", "date", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("network", "text", (c) => c.notNull())
      .addColumn("pay_to", "text", (c) => c.notNull())
      .addColumn("actor", "text", (c) => c.notNull())
      .addColumn("idempotency_key", "text")
      .addColumn("transaction", "text")
      .addColumn("receipt_url", "text")
      .addColumn("reason", "text")
      .addColumn("created_at", "timestamptz(3)", (c) => c.notNull())
      .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("spends_day").on("spends").columns(["account_id", "chain", "day"]).execute();
    await db.schema
      .createIndex("spends_idempotency")
      .on("spends")
      .columns(["account_id", "idempotency_key"])
      .unique()
      .where(sql.ref("idempotency_key"), "is not", null)
      .execute();

    await db.schema
      .createTable("wallet_events")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("wallet_id", "text", (c) => c.notNull().references("wallets.id"))
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("chain", "text", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('created', 'spent', 'revealed', 'flagged', 'revoked', 'refused')`))
      .addColumn("actor", "text", (c) => c.notNull())
      .addColumn("reason", "text")
      .addColumn("url", "text")
      .addColumn("amount", "bigint")
      .addColumn("transaction", "text")
      .addColumn("spend_id", "text")
      .addColumn("at", "timestamptz(3)", (c) => c.notNull())
      .execute();
    // The log of a chain's wallets, newest first, paged by (at, id).
    await db.schema.createIndex("wallet_events_list").on("wallet_events").columns(["account_id", "chain", "at desc", "id desc"]).execute();
  },
};
