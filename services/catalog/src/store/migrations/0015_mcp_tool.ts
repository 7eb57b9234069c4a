import { sql, type Migration } from "@c402/db";

/** mcp checkouts: the one tool a per-tool checkout sells (null: any tool of the server), and an origin for mcp as for relay. */
export const mcpTool: Migration = {
  async up(db) {
    await db.schema.alterTable("checkouts").addColumn("mcp_tool", "text").execute();
    await db.schema.alterTable("checkouts").dropConstraint("checkouts_relay_has_origin").execute();
    await db.schema
      .alterTable("checkouts")
      .addCheckConstraint("checkouts_origin_for_relay_and_mcp", sql`(fulfillment in ('relay', 'mcp')) = (origin_url is not null)`)
      .execute();
  },
};
