import { sql } from "kysely";
import type { AttemptOutcome, DeliveryAttemptRow, DeliveryRow, DeliveryStatus, PageQuery, WebhooksDb } from "./webhooks-store";

export type NewDelivery = Pick<
  DeliveryRow,
  "id" | "endpoint_id" | "account_id" | "event_id" | "event" | "aggregate_id" | "test_mode" | "payload" | "next_attempt_at" | "give_up_at" | "created_at"
>;

/** A delivery one sweeper holds: the attempt number it claimed and the token that proves the lease is still its own. */
export type ClaimedDelivery = Pick<DeliveryRow, "id" | "endpoint_id" | "payload" | "attempts" | "give_up_at" | "created_at"> & { lease_token: string };

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
  /** One delivery per (receiver, event): a redelivered event inserts nothing. */
  insertOnce: (db: WebhooksDb, rows: readonly NewDelivery[]) =>
    rows.length === 0
      ? Promise.resolve([])
      : db
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
      .updateTable("deliveries")
      .set({ lease_until: at.leaseUntil, lease_token: at.token, attempts: sql`attempts + 1` })
      .where("id", "in", (qb) =>
        qb
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
      .returning(["id", "endpoint_id", "payload", "attempts", "give_up_at", "created_at", "lease_token"])
      .execute() as Promise<ClaimedDelivery[]>,

  /**
   * Records an attempt and moves the delivery on, if the lease is still the
   * sweeper's (a sweeper that lost it records the attempt and leaves the rest
   * to the holder). True when the delivery moved.
   */
  async recordAttempt(db: WebhooksDb, delivery: { id: string; lease_token: string }, a: AttemptRecord): Promise<boolean> {
    await db
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
      .onConflict((oc) => oc.columns(["delivery_id", "number"]).doNothing())
      .execute();
    const status: DeliveryStatus = a.outcome === "delivered" ? "delivered" : a.outcome === "retry" ? "pending" : "failed";
    const moved = await db
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
      .executeTakeFirst();
    return Number(moved.numUpdatedRows) === 1;
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
