import type { Generated, Kysely, Selectable } from "kysely";

interface RecordedEventsTable {
  event_id: string;
  type: string;
  account_id: string;
  aggregate_id: string;
  test_mode: boolean;
  payload: Uint8Array;
  occurred_at: Date;
  recorded_at: Generated<Date>;
}

export interface WebhooksTables {
  recorded_events: RecordedEventsTable;
}

export type RecordedEventRow = Selectable<RecordedEventsTable>;
export type WebhooksDb = Kysely<WebhooksTables>;

export const webhooksStore = {
  /** Records an event unless its id is already recorded. */
  recordOnce: (db: WebhooksDb, row: Omit<RecordedEventRow, "recorded_at">) =>
    db
      .insertInto("recorded_events")
      .values({ ...row, payload: Buffer.from(row.payload) })
      .onConflict((oc) => oc.column("event_id").doNothing())
      .execute(),
  listForAccount: (db: WebhooksDb, accountId: string) =>
    db.selectFrom("recorded_events").selectAll().where("account_id", "=", accountId).orderBy("occurred_at", "desc").orderBy("event_id").execute(),
};
