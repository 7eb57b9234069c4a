import { sql } from "kysely";
import type { AttemptOutcome, DeliveryAttemptRow, DeliveryRow, DeliveryStatus, PageQuery, RecordedEventRow, WebhooksDb } from "./webhooks-store";

export type NewDelivery = Pick<
  DeliveryRow,
  "id" | "endpoint_id" | "account_id" | "event_id" | "event" | "aggregate_id" | "test_mode" | "payload" | "next_attempt_at" | "give_up_at" | "created_at"
>;

/**
 * A delivery one sweeper holds: the attempt number it claimed, the token that proves the lease is still its own,
 * and where it goes (the receiver's url and sealed secret as they are now: a re-key applies from the next attempt).
 */
export type ClaimedDelivery = Pick<DeliveryRow, "id" | "endpoint_id" | "payload" | "attempts" | "give_up_at" | "created_at"> & {
  lease_token: string;
  url: string;
  sealed_secret: string;
};

/** How an attempt ended, as the delivery records it. */
export interface AttemptRecord {
  number: number;
  startedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  outcome: AttemptOutcome;
  /** For a retry: when the next attempt is due. */
  nextAttemptAt: Date | null;
}

export const deliveriesStore = {
  /** Records a bus event and its deliveries in one statement: each insert is keyed by the event id, so a redelivered event adds nothing. */
  recordWithDeliveries: (db: WebhooksDb, event: Omit<RecordedEventRow, "recorded_at">, rows: readonly NewDelivery[]) =>
    db
      .with("recorded", (qb) =>
        qb
          .insertInto("recorded_events")
          .values({ ...event, payload: Buffer.from(event.payload) })
          .onConflict((oc) => oc.column("event_id").doNothing()),
      )
      .insertInto("deliveries")
      .values(rows.map((r) => ({ ...r, status: "pending" as const })))
      .onConflict((oc) => oc.columns(["endpoint_id", "event_id"]).doNothing())
      .returning("id")
      .execute(),

  /**
   * Leases up to `limit` due deliveries to one sweeper until `leaseUntil`, and
   * counts the attempt it is about to make. SKIP LOCKED lets replicas claim side
   * by side; a lease that ran out (its holder died mid-send) is due again.
   */
  claimDue: (db: WebhooksDb, at: { now: Date; leaseUntil: Date; token: string; limit: number }): Promise<ClaimedDelivery[]> =>
    db
      .with("claimed", (qb) =>
        qb
          .updateTable("deliveries")
          .set({ lease_until: at.leaseUntil, lease_token: at.token, attempts: sql`attempts + 1` })
          .where("id", "in", (sub) =>
            sub
              .selectFrom("deliveries")
              .select("id")
              .where("status", "=", "pending")
              .where("next_attempt_at", "<=", at.now)
              .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<=", at.now)]))
              .orderBy("next_attempt_at")
              .limit(at.limit)
              .forUpdate()
              .skipLocked(),
          )
          .returning(["id", "endpoint_id", "payload", "attempts", "give_up_at", "created_at", "lease_token"]),
      )
      .selectFrom("claimed")
      .innerJoin("endpoints", "endpoints.id", "claimed.endpoint_id")
      .select([
        "claimed.id",
        "claimed.endpoint_id",
        "claimed.payload",
        "claimed.attempts",
        "claimed.give_up_at",
        "claimed.created_at",
        "claimed.lease_token",
        "endpoints.url",
        "endpoints.sealed_secret",
      ])
      .execute() as Promise<ClaimedDelivery[]>,

  /**
   * Records an attempt, moves the delivery on and counts it on its receiver,
   * in one statement, if the lease is still the sweeper's (a sweeper that lost
   * it records the attempt and leaves the rest to the holder). True when the
   * delivery moved.
   */
  async recordAttempt(db: WebhooksDb, delivery: { id: string; lease_token: string }, a: AttemptRecord, at: Date): Promise<boolean> {
    const status: DeliveryStatus = a.outcome === "delivered" ? "delivered" : a.outcome === "retry" ? "pending" : "failed";
    const counted =
      a.outcome === "delivered"
        ? { consecutive_failures: 0, delivered: sql<bigint>`delivered + 1`, last_success_at: at }
        : {
            consecutive_failures: sql<number>`consecutive_failures + 1`,
            failed_attempts: sql<bigint>`failed_attempts + 1`,
            failed_deliveries: a.outcome === "retry" ? sql<bigint>`failed_deliveries` : sql<bigint>`failed_deliveries + 1`,
            last_failure_at: at,
          };
    const r = await db
      .with("attempt", (qb) =>
        qb
          .insertInto("delivery_attempts")
          .values({
            delivery_id: delivery.id,
            number: a.number,
            started_at: a.startedAt,
            status_code: a.statusCode,
            latency_ms: a.latencyMs,
            error: a.error,
            outcome: a.outcome,
          })
          .onConflict((oc) => oc.columns(["delivery_id", "number"]).doNothing()),
      )
      .with("moved", (qb) =>
        qb
          .updateTable("deliveries")
          .set({
            status,
            next_attempt_at: a.outcome === "retry" ? a.nextAttemptAt : null,
            lease_until: null,
            lease_token: null,
            last_status_code: a.statusCode,
            last_error: a.error,
            ...(a.outcome === "delivered" ? { delivered_at: new Date(a.startedAt.getTime() + a.latencyMs) } : {}),
          })
          .where("id", "=", delivery.id)
          .where("lease_token", "=", delivery.lease_token)
          .where("status", "=", "pending")
          .returning("endpoint_id"),
      )
      .updateTable("endpoints")
      .set(counted)
      .where("id", "in", (qb) => qb.selectFrom("moved").select("endpoint_id"))
      .returning("id")
      .execute();
    // Rows, not the affected count: with data-modifying CTEs, drivers disagree on what that count covers.
    return r.length === 1;
  },

  /** Makes a receiver's pending deliveries due now (it has just answered again); answers how many. */
  sendNowFor: async (db: WebhooksDb, endpointId: string, now: Date): Promise<number> => {
    const r = await db
      .updateTable("deliveries")
      .set({ next_attempt_at: now })
      .where("endpoint_id", "=", endpointId)
      .where("status", "=", "pending")
      .where("next_attempt_at", ">", now)
      .returning("id")
      .execute();
    return r.length;
  },

  /** A receiver answered 410: what was still due to it fails with the reason (the seller rebuilds from the ledger). */
  failPendingOf: (db: WebhooksDb, endpointId: string, reason: string) =>
    db
      .updateTable("deliveries")
      .set({ status: "failed", next_attempt_at: null, lease_until: null, lease_token: null, last_error: reason })
      .where("endpoint_id", "=", endpointId)
      .where("status", "=", "pending")
      .executeTakeFirst(),

  countPendingOf: async (db: WebhooksDb, endpointId: string) =>
    Number(
      (
        await db
          .selectFrom("deliveries")
          .select(sql<string>`count(*)`.as("n"))
          .where("endpoint_id", "=", endpointId)
          .where("status", "=", "pending")
          .executeTakeFirstOrThrow()
      ).n,
    ),

  list: (db: WebhooksDb, endpointId: string, page: PageQuery, status?: DeliveryStatus) => {
    let q = db.selectFrom("deliveries").selectAll().where("endpoint_id", "=", endpointId);
    if (status) q = q.where("status", "=", status);
    if (page.after) {
      const { createdAt, id } = page.after;
      q = q.where((eb) => eb.or([eb("created_at", "<", createdAt), eb.and([eb("created_at", "=", createdAt), eb("id", "<", id)])]));
    }
    return q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.limit).execute();
  },

  find: (db: WebhooksDb, endpointId: string, id: string) =>
    db.selectFrom("deliveries").selectAll().where("endpoint_id", "=", endpointId).where("id", "=", id).executeTakeFirst(),

  attemptsOf: (db: WebhooksDb, deliveryId: string): Promise<DeliveryAttemptRow[]> =>
    db.selectFrom("delivery_attempts").selectAll().where("delivery_id", "=", deliveryId).orderBy("number").execute(),

  /** When the next delivery is due (the sweeper sleeps until then, or until poked). */
  nextDue: async (db: WebhooksDb): Promise<Date | undefined> =>
    (
      await db
        .selectFrom("deliveries")
        .select(sql<Date | null>`min(next_attempt_at)`.as("at"))
        .where("status", "=", "pending")
        .executeTakeFirstOrThrow()
    ).at ?? undefined,
};
