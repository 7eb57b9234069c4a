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

/** An event as the fan-out statement takes it: its recorded row, and the webhook event name receivers subscribe to. */
export interface IncomingEvent {
  row: Omit<RecordedEventRow, "recorded_at">;
  event: string;
}

/**
 * Every event a webhook could be for runs it, a bus fetch's events at once:
 * built once (see reusableStatement). The events come as one JSON array
 * (`i` their index), so the text is the same for any number of them.
 */
const receiversOrRecordEach = reusableStatement((db: WebhooksDb, v: { events: string }) =>
  db
    .with("incoming", (qb) =>
      qb
        .selectFrom(sql<{ e: unknown }>`jsonb_array_elements(${v.events}::jsonb)`.as("e"))
        .select([
          sql<number>`(e->>'i')::int`.as("i"),
          sql<string>`e->>'event_id'`.as("event_id"),
          sql<string>`e->>'type'`.as("type"),
          sql<string>`e->>'account_id'`.as("account_id"),
          sql<string>`e->>'aggregate_id'`.as("aggregate_id"),
          sql<boolean>`(e->>'test_mode')::boolean`.as("test_mode"),
          sql<Buffer>`decode(e->>'payload', 'base64')`.as("payload"),
          sql<Date>`(e->>'occurred_at')::timestamptz`.as("occurred_at"),
          sql<string>`e->>'event'`.as("event"),
        ]),
    )
    .with("receivers", (qb) =>
      qb
        .selectFrom("incoming")
        .innerJoin("endpoints", "endpoints.account_id", "incoming.account_id")
        .select(["incoming.i", "endpoints.id"])
        .where("endpoints.active", "=", true)
        .where(sql<boolean>`endpoints.events @> jsonb_build_array(incoming.event)`),
    )
    .with("recorded", (qb) =>
      qb
        .insertInto("recorded_events")
        .columns(["event_id", "type", "account_id", "aggregate_id", "test_mode", "payload", "occurred_at"])
        .expression(
          qb
            .selectFrom("incoming")
            .select(["event_id", "type", "account_id", "aggregate_id", "test_mode", "payload", "occurred_at"])
            .where(({ not, exists, selectFrom }) => not(exists(selectFrom("receivers").select("id").whereRef("receivers.i", "=", "incoming.i")))),
        )
        .onConflict((oc) => oc.column("event_id").doNothing()),
    )
    .selectFrom("receivers")
    .select(["i", "id"]),
);

export const webhooksStore = {
  /**
   * Each event's active receivers, in the order given; the events that have
   * none are recorded in the same statement (there is nothing to deliver, so
   * nothing else to write). With receivers, nothing is written for the event:
   * the caller records it with its deliveries (deliveriesStore.recordWithDeliveries).
   */
  async receiversOrRecordEach(db: WebhooksDb, events: IncomingEvent[]): Promise<string[][]> {
    const json = JSON.stringify(
      events.map(({ row, event }, i) => ({
        ...row,
        i,
        event,
        payload: Buffer.from(row.payload).toString("base64"),
        occurred_at: row.occurred_at.toISOString(),
      })),
    );
    const receivers = events.map((): string[] => []);
    for (const r of (await receiversOrRecordEach(db, { events: json })).rows as { i: number; id: string }[]) receivers[r.i]?.push(r.id);
    return receivers;
  },
  listForAccount: (db: WebhooksDb, accountId: string) =>
    db.selectFrom("recorded_events").selectAll().where("account_id", "=", accountId).orderBy("occurred_at", "desc").orderBy("event_id").execute(),
};
