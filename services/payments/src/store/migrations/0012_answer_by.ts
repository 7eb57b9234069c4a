import type { Migration } from "@c402/db";

/**
 * When the buyer's request that claimed a relay or mcp payment stops waiting
 * (ADR 9, "Deadlines"): the payment settles only while that request can still
 * be answered; past it, an unsettled claim is released, never settled behind
 * the buyer's back. Null for inline, webhook and older rows.
 */
export const paymentAnswerBy: Migration = {
  async up(db) {
    await db.schema.alterTable("payments").addColumn("answer_by", "timestamptz").execute();
  },
};
