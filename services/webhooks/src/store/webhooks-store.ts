import { reusableStatement, sql } from "@c402/db";
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

export interface EndpointsTable {
  id: string;
  account_id: string;
  url: string;
  /** JSON array of webhook event names. */
  events: string[];
  sealed_secret: string;
  active: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  consecutive_failures: Generated<number>;
  failed_attempts: Generated<bigint>;
  failed_deliveries: Generated<bigint>;
  delivered: Generated<bigint>;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  created_at: Date;
  rekeyed_at: Date | null;
}

export interface SigningKeysTable {
  id: string;
  generation: number;
  public_key: Uint8Array;
  sealed_private_key: string;
  created_at: Date;
  retires_at: Date | null;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

export interface DeliveriesTable {
  id: string;
  endpoint_id: string;
  account_id: string;
  event_id: string;
  event: string;
  aggregate_id: string;
  test_mode: boolean;
  payload: string;
  status: DeliveryStatus;
  attempts: Generated<number>;
  next_attempt_at: Date | null;
  give_up_at: Date;
  lease_until: Date | null;
  lease_token: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

export type AttemptOutcome = "delivered" | "retry" | "disabled" | "failed";

export interface DeliveryAttemptsTable {
  delivery_id: string;
  number: number;
  started_at: Date;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  outcome: AttemptOutcome;
}

export interface WebhooksTables {
  recorded_events: RecordedEventsTable;
  endpoints: EndpointsTable;
  signing_keys: SigningKeysTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
}

export type RecordedEventRow = Selectable<RecordedEventsTable>;
export type EndpointRow = Selectable<EndpointsTable>;
export type SigningKeyRow = Selectable<SigningKeysTable>;
export type DeliveryRow = Selectable<DeliveriesTable>;
export type DeliveryAttemptRow = Selectable<DeliveryAttemptsTable>;
export type WebhooksDb = Kysely<WebhooksTables>;

/** Lists are newest first by (created_at, id); a page holds the items after `after`. */
export interface PageQuery {
  limit: number;
  after?: { createdAt: Date; id: string };
}

/** Every event a webhook could be for runs it: built once (see reusableStatement). */
const receiversOrRecord = reusableStatement((db: WebhooksDb, v: { row: Omit<RecordedEventRow, "recorded_at">; events: string }) =>
  db
    .with("receivers", (qb) =>
      qb
        .selectFrom("endpoints")
        .select("id")
        .where("account_id", "=", v.row.account_id)
        .where("active", "=", true)
        .where(sql<boolean>`events @> ${v.events}::jsonb`),
    )
    .with("recorded", (qb) =>
      qb
        .insertInto("recorded_events")
        .columns(["event_id", "type", "account_id", "aggregate_id", "test_mode", "payload", "occurred_at"])
        .expression(
          qb
            .selectNoFrom([
              sql<string>`${v.row.event_id}::text`.as("event_id"),
              sql<string>`${v.row.type}::text`.as("type"),
              sql<string>`${v.row.account_id}::text`.as("account_id"),
              sql<string>`${v.row.aggregate_id}::text`.as("aggregate_id"),
              sql<boolean>`${v.row.test_mode}::boolean`.as("test_mode"),
              sql<Buffer>`${v.row.payload}::bytea`.as("payload"),
              sql<Date>`${v.row.occurred_at}::timestamptz`.as("occurred_at"),
            ])
            .where(({ not, exists, selectFrom }) => not(exists(selectFrom("receivers").select("id")))),
        )
        .onConflict((oc) => oc.column("event_id").doNothing()),
    )
    .selectFrom("receivers")
    .select("id"),
);

export const webhooksStore = {
  /** Records an event unless its id is already recorded; true when it was new. */
  /**
   * The account's active receivers of `event`; when it has none, the event is
   * recorded in the same statement (there is nothing to deliver, so nothing
   * else to write). With receivers, nothing is written: the caller records the
   * event with its deliveries (deliveriesStore.recordWithDeliveries).
   */
  async receiversOrRecord(db: WebhooksDb, row: Omit<RecordedEventRow, "recorded_at">, event: string): Promise<string[]> {
    const receivers = await receiversOrRecord(db, { row: { ...row, payload: Buffer.from(row.payload) }, events: JSON.stringify([event]) });
    return receivers.rows.map((r) => r.id);
  },
  listForAccount: (db: WebhooksDb, accountId: string) =>
    db.selectFrom("recorded_events").selectAll().where("account_id", "=", accountId).orderBy("occurred_at", "desc").orderBy("event_id").execute(),
};
