import { sql, type Migration } from "@c402/db";

/**
 * Magic-link sign-in. A link is stored by the SHA-256 hash of its token only,
 * with the (normalised) address it was sent to and where to go after; it is
 * consumed by setting `used_at`, once. An account signed in by mail carries
 * its address (`accounts.email`, unique: the first verify of an address
 * creates its account, and two verifies racing on a new address meet on this
 * index). `sessions.via` says how a session was opened (`wallet` or
 * `magic_link`), which is how account events name it (actor `wallet` or
 * `session`); every session before this migration came from a wallet.
 */
export const magicLinks: Migration = {
  async up(db) {
    await db.schema
      .createTable("magic_links")
      .addColumn("token_hash", "text", (c) => c.primaryKey())
      .addColumn("email", "text", (c) => c.notNull())
      .addColumn("return_to", "text")
      .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn("expires_at", "timestamptz", (c) => c.notNull())
      .addColumn("used_at", "timestamptz")
      .execute();
    await db.schema.createIndex("magic_links_expiry").on("magic_links").column("expires_at").execute();
    await db.schema.alterTable("accounts").addColumn("email", "text").execute();
    await db.schema.createIndex("accounts_email").on("accounts").column("email").unique().execute();
    await db.schema
      .alterTable("sessions")
      .addColumn("via", "text", (c) => c.notNull().defaultTo("wallet"))
      .execute();
    await db.schema
      .alterTable("sessions")
      .addCheckConstraint("sessions_via", sql`via in ('wallet', 'magic_link')`)
      .execute();
  },
};
