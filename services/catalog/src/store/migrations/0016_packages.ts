import { sql, type Migration } from "@c402/db";

/** Package checkouts: calls one payment buys and how long a package stays spendable; relay and mcp only. */
export const checkoutPackages: Migration = {
  async up(db) {
    await db.schema.alterTable("checkouts").addColumn("max_deliveries", "integer").addColumn("package_ttl_days", "integer").execute();
    await db.schema
      .alterTable("checkouts")
      .addCheckConstraint(
        "checkouts_package_terms",
        sql`(max_deliveries is null) = (package_ttl_days is null) and (max_deliveries is null or fulfillment in ('relay', 'mcp'))`,
      )
      .execute();
  },
};
