import type { DeliveryOutcomeName, OriginAuthTypeName } from "@c402/contracts";
import { sql, type Selectable } from "kysely";
import type { FulfillmentDb } from "./origin-keys-store";

interface CheckoutCredentialsTable {
  checkout_id: string;
  account_id: string;
  auth_type: OriginAuthTypeName;
  header_name: string | null;
  /** Sealed with the checkout's id as associated data. */
  sealed_value: string;
  created_at: Date;
}

export type DeliveryState = "calling" | "done" | "abandoned";

interface DeliveriesTable {
  payment_id: string;
  checkout_id: string | null;
  /** The seller's account (null on rows recorded before it was kept, and on abandoned ones never started). */
  account_id: string | null;
  test_mode: boolean;
  state: DeliveryState;
  outcome: DeliveryOutcomeName | null;
  charged: boolean;
  status: number;
  content_type: string | null;
  body: Buffer | null;
  latency_ms: number;
  bytes: number;
  reason: string;
  started_at: Date;
  deadline_at: Date;
  finished_at: Date | null;
}

interface TestDeliveryCountsTable {
  checkout_id: string;
  day: string;
  count: number;
}

export interface RelayTables {
  checkout_credentials: CheckoutCredentialsTable;
  deliveries: DeliveriesTable;
  test_delivery_counts: TestDeliveryCountsTable;
}

export type DeliveryRow = Selectable<DeliveriesTable>;
export type CheckoutCredentialRow = Selectable<CheckoutCredentialsTable>;
/** What a finished delivery records. */
export type DeliveryResult = Pick<DeliveryRow, "outcome" | "charged" | "status" | "content_type" | "body" | "latency_ms" | "bytes" | "reason">;

/** A delivery row's result columns before it has one. */
const NO_RESULT = { outcome: null, charged: false, status: 0, content_type: null, body: null, latency_ms: 0, bytes: 0, reason: "", finished_at: null } as const;

export async function upsertCheckoutCredential(db: FulfillmentDb, row: CheckoutCredentialRow): Promise<void> {
  await db
    .insertInto("checkout_credentials")
    .values(row)
    .onConflict((oc) => oc.column("checkout_id").doUpdateSet({ auth_type: row.auth_type, header_name: row.header_name, sealed_value: row.sealed_value }))
    .execute();
}

export function findCheckoutCredential(db: FulfillmentDb, checkoutId: string): Promise<CheckoutCredentialRow | undefined> {
  return db.selectFrom("checkout_credentials").selectAll().where("checkout_id", "=", checkoutId).executeTakeFirst();
}

/** Drops whatever binds a checkout to a credential (its one-off copy, its origin-key use). */
export async function forgetCheckout(db: FulfillmentDb, checkoutId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("checkout_credentials").where("checkout_id", "=", checkoutId).execute();
    await trx.deleteFrom("origin_key_uses").where("checkout_id", "=", checkoutId).execute();
  });
}

export async function recordOriginKeyUse(db: FulfillmentDb, checkoutId: string, originKeyId: string): Promise<void> {
  await db
    .insertInto("origin_key_uses")
    .values({ checkout_id: checkoutId, origin_key_id: originKeyId })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** Bytes as a Buffer whichever driver read them (PGlite answers a plain Uint8Array). */
const withBuffer = (row: DeliveryRow | undefined): DeliveryRow | undefined => row && { ...row, body: row.body === null ? null : Buffer.from(row.body) };

export async function findDelivery(db: FulfillmentDb, paymentId: string): Promise<DeliveryRow | undefined> {
  return withBuffer(await db.selectFrom("deliveries").selectAll().where("payment_id", "=", paymentId).executeTakeFirst());
}

/**
 * Records that the payment's delivery starts (state `calling`), counting it
 * against the checkout's rehearsal cap for `day` when `testCap` is given;
 * nothing is recorded when the cap is reached. Answers false when the payment
 * already has a delivery (started, finished or abandoned), "cap" at the cap,
 * and what the day's cap has left after this one when it was counted.
 */
export async function startDelivery(
  db: FulfillmentDb,
  row: Pick<DeliveryRow, "payment_id" | "checkout_id" | "account_id" | "test_mode" | "started_at" | "deadline_at">,
  testCap?: { day: string; cap: number },
): Promise<{ left?: number } | false | "cap"> {
  return db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto("deliveries")
      .values({ ...NO_RESULT, ...row, state: "calling" })
      .onConflict((oc) => oc.column("payment_id").doNothing())
      .returning("payment_id")
      .executeTakeFirst();
    if (!inserted) return false;
    if (!testCap) return {};
    const left = await countTestDelivery(trx, row.checkout_id as string, testCap);
    if (left !== undefined) return { left };
    await trx
      .updateTable("deliveries")
      .set({ state: "done", outcome: "test_cap_reached", reason: "test_cap_reached", finished_at: row.started_at })
      .where("payment_id", "=", row.payment_id)
      .execute();
    return "cap";
  });
}

/** How many of an account's purchases since `since` failed on the seller's side (not charged). */
export async function countFailedDeliveries(db: FulfillmentDb, accountId: string, since: Date, testMode: boolean): Promise<number> {
  const row = await db
    .selectFrom("deliveries")
    .select(sql<string>`count(*)::text`.as("n"))
    .where("account_id", "=", accountId)
    .where("outcome", "=", "origin_failed")
    .where("test_mode", "=", testMode)
    .where("started_at", ">=", since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Counts one rehearsal delivery of a checkout against its cap for `day`, in
 * one statement whatever runs beside it: answers what the cap has left after
 * it, or undefined when the cap was already reached (nothing counted).
 */
export async function countTestDelivery(db: FulfillmentDb, checkoutId: string, testCap: { day: string; cap: number }): Promise<number | undefined> {
  const counted = await db
    .insertInto("test_delivery_counts")
    .values({ checkout_id: checkoutId, day: testCap.day, count: 1 })
    .onConflict((oc) =>
      oc
        .columns(["checkout_id", "day"])
        .doUpdateSet({ count: sql`test_delivery_counts.count + 1` })
        .where("test_delivery_counts.count", "<", testCap.cap),
    )
    .returning("count")
    .executeTakeFirst();
  return counted ? Math.max(0, testCap.cap - counted.count) : undefined;
}

/** Records a started delivery's result, unless it was abandoned meanwhile; answers the row as it stands. */
export async function finishDelivery(db: FulfillmentDb, paymentId: string, result: DeliveryResult, at: Date): Promise<DeliveryRow | undefined> {
  const done = await db
    .updateTable("deliveries")
    .set({ ...result, state: "done", finished_at: at })
    .where("payment_id", "=", paymentId)
    .where("state", "=", "calling")
    .returningAll()
    .executeTakeFirst();
  return done ? withBuffer(done) : findDelivery(db, paymentId);
}

/**
 * Abandons the payment's delivery unless it finished: one still calling past
 * `cutoff` (its deadline plus a grace), or one never started (a row is
 * written so it cannot start any more). Answers the row as it stands.
 */
export async function abandonDelivery(db: FulfillmentDb, paymentId: string, now: Date, cutoff: Date): Promise<DeliveryRow | undefined> {
  await db
    .insertInto("deliveries")
    .values({
      ...NO_RESULT,
      payment_id: paymentId,
      checkout_id: null,
      account_id: null,
      test_mode: false,
      state: "abandoned",
      outcome: "abandoned",
      reason: "abandoned",
      started_at: now,
      deadline_at: now,
      finished_at: now,
    })
    .onConflict((oc) => oc.column("payment_id").doNothing())
    .execute();
  await db
    .updateTable("deliveries")
    .set({ state: "abandoned", outcome: "abandoned", reason: "abandoned", finished_at: now })
    .where("payment_id", "=", paymentId)
    .where("state", "=", "calling")
    .where("deadline_at", "<", cutoff)
    .execute();
  return findDelivery(db, paymentId);
}
