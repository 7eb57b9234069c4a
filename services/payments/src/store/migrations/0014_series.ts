import { sql } from "kysely";
import type { Migration } from "@c402/db";

/**
 * A recurring series (ADR 20). Every payment of a series names it and its
 * period (0: the purchase); period 0's row also keeps the series (`series`:
 * the terms, the anchor and each held period's signed authorization), written
 * in the same insert as the payment, before anything is sent. One payment per
 * (schedule, period): a second ChargeHeldPeriod loses the insert and answers
 * the first. A held authorization's cancel is recorded before it is sent.
 */
export const paymentSeries: Migration = {
  async up(db) {
    await db.schema.alterTable("payments").addColumn("schedule_id", "text").addColumn("schedule_period", "integer").addColumn("series", "jsonb").execute();
    await db.schema
      .createIndex("payments_schedule_period_once")
      .on("payments")
      .columns(["schedule_id", "schedule_period"])
      .unique()
      .where(sql<boolean>`schedule_id is not null`)
      .execute();
    await db.schema
      .createTable("held_cancels")
      .addColumn("schedule_id", "text", (c) => c.notNull())
      .addColumn("nonce", "text", (c) => c.notNull())
      .addColumn("period", "integer", (c) => c.notNull())
      .addColumn("network", "text", (c) => c.notNull())
      .addColumn("tx_hash", "text", (c) => c.notNull())
      .addColumn("raw_tx", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addPrimaryKeyConstraint("held_cancels_pk", ["schedule_id", "nonce"])
      .execute();
  },
};
