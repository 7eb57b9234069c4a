import { sql, type Migration } from "@c402/db";

/**
 * Gated content: a checkout with a content declaration (JSON text, as
 * catalog normalized it) is a gated article, id prefix cnt_, face /x/{id}.
 * Sold inline (the article is the payload) or relay (the seller's origin
 * serves it), never as a package.
 */
export const checkoutContent: Migration = {
  async up(db) {
    await db.schema.alterTable("checkouts").addColumn("content_json", "text").execute();
    await db.schema
      .alterTable("checkouts")
      .addCheckConstraint("checkouts_content_terms", sql`content_json is null or (fulfillment in ('inline', 'relay') and max_deliveries is null)`)
      .execute();
  },
};
