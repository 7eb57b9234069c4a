import { sql, type Migration } from "@c402/db";

/**
 * Idempotency keys are scoped per (account, mode, key): a test key and a live
 * key of one account never share a key. Rows written before this migration do
 * not say which mode claimed them, so each is kept for both modes: a retry of a
 * pre-migration request replays as it did before, in either mode, until the
 * row's 24-hour retention ends.
 */
export const idempotencyKeysPerMode: Migration = {
  async up(db) {
    await db.schema
      .alterTable("idempotency_keys")
      .addColumn("mode", "text", (c) =>
        c
          .notNull()
          .defaultTo("test")
          .check(sql`mode in ('test', 'live')`),
      )
      .execute();
    await db.schema.alterTable("idempotency_keys").dropConstraint("idempotency_keys_pk").execute();
    const copied = ["account_id", "key", "fingerprint", "state", "checkout_id", "snapshot", "created_at"] as const;
    await db
      .insertInto("idempotency_keys")
      .columns([...copied, "mode"])
      .expression(db.selectFrom("idempotency_keys").select([...copied, sql.lit("live").as("mode")]))
      .execute();
    await db.schema
      .alterTable("idempotency_keys")
      .alterColumn("mode", (c) => c.dropDefault())
      .execute();
    await db.schema.alterTable("idempotency_keys").addPrimaryKeyConstraint("idempotency_keys_pk", ["account_id", "mode", "key"]).execute();
  },
};
