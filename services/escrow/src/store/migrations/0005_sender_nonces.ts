import type { Migration } from "@c402/db";

/**
 * The relayer's nonce count takes the shared mechanism's table name (`@c402/sender-nonces`, as
 * payments counts its facilitator key's): relayer_nonces becomes sender_nonces, counts kept.
 * Through the schema builder, so the statements name the service's schema in every run mode.
 */
export const senderNoncesName: Migration = {
  async up(db) {
    await db.schema.alterTable("relayer_nonces").renameTo("sender_nonces").execute();
    await db.schema.alterTable("sender_nonces").dropConstraint("relayer_nonces_pk").execute();
    await db.schema.alterTable("sender_nonces").addPrimaryKeyConstraint("sender_nonces_pk", ["chain_id", "address"]).execute();
  },
};
