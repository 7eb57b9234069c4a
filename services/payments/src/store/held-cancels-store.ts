import type { Insertable, Selectable } from "kysely";
import type { HeldCancelsTable, PaymentsDb } from "./payments-store";

export type HeldCancelRow = Selectable<HeldCancelsTable>;

/**
 * The cancels of a series' held authorizations (ADR 20): one row per (series,
 * nonce), recorded with its signed transaction before it is sent, so a retry
 * sends the same one. Nonces are stored lowercase.
 */
export const heldCancelsStore = {
  find: (db: PaymentsDb, scheduleId: string, nonce: string) =>
    db.selectFrom("held_cancels").selectAll().where("schedule_id", "=", scheduleId).where("nonce", "=", nonce.toLowerCase()).executeTakeFirst(),

  /** Inserts the cancel unless one of the same nonce is recorded (answers the inserted row, or undefined). */
  insertIfNew: (db: PaymentsDb, row: Insertable<HeldCancelsTable>) =>
    db
      .insertInto("held_cancels")
      .values({ ...row, nonce: row.nonce.toLowerCase() })
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .executeTakeFirst(),

  markCancelled: (db: PaymentsDb, scheduleId: string, nonce: string) =>
    db.updateTable("held_cancels").set({ status: "cancelled" }).where("schedule_id", "=", scheduleId).where("nonce", "=", nonce.toLowerCase()).execute(),
};
