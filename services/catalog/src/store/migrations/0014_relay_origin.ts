import { sql, type Migration } from "@c402/db";

/**
 * A relay checkout's origin: URL, method and how calls authenticate (the
 * auth type and header, and the stored origin key or the fact that
 * fulfillment keeps a one-off credential for it). No credential is ever
 * stored here.
 */
export const relayOrigin: Migration = {
  async up(db) {
    await db.schema
      .alterTable("checkouts")
      .addColumn("origin_url", "text")
      .addColumn("origin_method", "text")
      .addColumn("origin_auth_type", "text")
      .addColumn("origin_auth_header", "text")
      .addColumn("origin_key_id", "text")
      .addColumn("origin_one_off", "boolean", (c) => c.notNull().defaultTo(false))
      .execute();
    await db.schema
      .alterTable("checkouts")
      .addCheckConstraint("checkouts_relay_has_origin", sql`(fulfillment = 'relay') = (origin_url is not null)`)
      .execute();
  },
};
