import { sql, type Migration } from "@c402/db";

/**
 * Escrow checkouts (ADR 19): an esc_ checkout's terms, frozen at create
 * ({preset, settle_seconds, hold_seconds, backstop_seconds, arbiter_evm,
 * arbiter_svm}, as the escrow service resolved them), and the link between an
 * `escrow_offer: optional` checkout and its escrow twin (each names the other).
 * An escrow checkout is sold inline or relay, never as gated content.
 * Existing checkouts are plain ones.
 */
export const escrowCheckouts: Migration = {
  async up(db) {
    await db.schema.alterTable("checkouts").addColumn("escrow", "jsonb").addColumn("escrow_twin_id", "text").execute();
    await db.schema
      .alterTable("checkouts")
      .addCheckConstraint("checkouts_escrow_terms", sql`escrow is null or (fulfillment in ('inline', 'relay') and content_json is null)`)
      .execute();
  },
};
