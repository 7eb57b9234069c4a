import { sql, type Migration } from "@c402/db";

/**
 * What the deposits and the contract calls need (ADR 19), on top of 0002's
 * escrows table (which holds no rows yet):
 *
 * - escrows gains the state `depositing` (recorded, deposit not confirmed) and
 *   `failed` (the deposit was refused on chain), the contract's escrow id, the
 *   terms and authorization as the buyer signed them, what closed it, and the
 *   action nonce of a test escrow (the contract keeps the live one); the
 *   deposit's hash and time are unknown until it is sent and mined.
 * - escrow_transactions: every transaction the relayer sends, recorded with its
 *   signed bytes and hash before it is sent (the saga of ADR 8), at most one
 *   live deposit and one timed exit per escrow, one per signed action.
 * - relayer_nonces: the relayer key's nonce count, shared by every replica (ADR 11).
 * - chain_cursors: the last block whose contract logs were applied.
 */
export const escrowLedger: Migration = {
  async up(db) {
    // Through the schema builder (not raw SQL), so the statements name the service's schema in every run mode.
    await db.schema.alterTable("escrows").dropConstraint("escrows_state_check").execute();
    await db.schema
      .alterTable("escrows")
      .addCheckConstraint("escrows_state_check", sql`state in ('depositing', 'held', 'on_hold', 'escalated', 'released', 'refunded', 'failed')`)
      .execute();
    await db.schema
      .alterTable("escrows")
      .alterColumn("deposit_tx_hash", (c) => c.dropNotNull())
      .execute();
    await db.schema
      .alterTable("escrows")
      .alterColumn("deposited_at", (c) => c.dropNotNull())
      .execute();
    await db.schema
      .alterTable("escrows")
      .addColumn("escrow_id", "text", (c) => c.notNull())
      .addColumn("seller", "text", (c) => c.notNull())
      .addColumn("terms", "jsonb", (c) => c.notNull())
      .addColumn("authorization", "jsonb", (c) => c.notNull())
      .addColumn("action_nonce", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("close_tx_hash", "text")
      .addColumn("closed_by", "text")
      .addColumn("failure_reason", "text")
      .addColumn("created_at", "timestamptz(3)", (c) => c.notNull())
      .execute();
    // One escrow per id per contract (a live id names one set of terms on one contract on one chain).
    await db.schema.createIndex("escrows_escrow_id").on("escrows").columns(["contract_address", "escrow_id", "test_mode"]).unique().execute();
    await db.schema.createIndex("escrows_account_newest").on("escrows").columns(["account_id", "created_at", "payment_id"]).execute();

    await db.schema
      .createTable("escrow_transactions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("payment_id", "text", (c) => c.notNull().references("escrows.payment_id"))
      .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('deposit', 'action', 'release', 'refund')`))
      .addColumn("action", "text")
      .addColumn("raw_tx", "text", (c) => c.notNull())
      .addColumn("tx_hash", "text", (c) => c.notNull())
      .addColumn("nonce", "bigint", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('signed', 'sent', 'confirmed', 'failed')`))
      .addColumn("failure_reason", "text")
      .addColumn("created_at", "timestamptz(3)", (c) => c.notNull())
      .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull())
      .execute();
    // Never a second transaction for one deposit or one timed exit.
    await db.schema
      .createIndex("escrow_transactions_one_deposit")
      .on("escrow_transactions")
      .column("payment_id")
      .unique()
      .where(sql<boolean>`kind = 'deposit'`)
      .execute();
    await db.schema
      .createIndex("escrow_transactions_one_exit")
      .on("escrow_transactions")
      .column("payment_id")
      .unique()
      .where(sql<boolean>`kind in ('release', 'refund') and status <> 'failed'`)
      .execute();
    await db.schema.createIndex("escrow_transactions_hash").on("escrow_transactions").column("tx_hash").execute();
    await db.schema
      .createIndex("escrow_transactions_open")
      .on("escrow_transactions")
      .column("updated_at")
      .where(sql<boolean>`status in ('signed', 'sent')`)
      .execute();

    await db.schema
      .createTable("relayer_nonces")
      .addColumn("chain_id", "bigint", (c) => c.notNull())
      .addColumn("address", "text", (c) => c.notNull())
      .addColumn("next_nonce", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull())
      .addPrimaryKeyConstraint("relayer_nonces_pk", ["chain_id", "address"])
      .execute();

    await db.schema
      .createTable("chain_cursors")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("block", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull())
      .execute();
  },
};
