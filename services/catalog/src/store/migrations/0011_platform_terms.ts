import type { Migration } from "@c402/db";

/**
 * The platform terms a checkout took from its account at create, frozen: the
 * wallet its platform cut is paid to (null without a cut) and what receipts
 * name the platform (`sold_by`; null unless a platform account created it).
 */
export const checkoutPlatformTerms: Migration = {
  async up(db) {
    await db.schema.alterTable("checkouts").addColumn("platform_fee_to", "text").addColumn("sold_by", "text").execute();
  },
};
