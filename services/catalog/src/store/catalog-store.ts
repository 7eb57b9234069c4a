import type { Kysely, Selectable } from "kysely";
import type { StoredStatus } from "../domain/checkout-rules";

interface CheckoutsTable {
  id: string;
  account_id: string;
  title: string;
  description: string | null;
  price_atomic: bigint;
  pay_to: string;
  fulfillment: string;
  payload_json: string | null;
  reusable: boolean;
  armed: boolean;
  armed_at: Date | null;
  status: StoredStatus;
  offer: Record<string, string | null>;
  created_at: Date;
  expires_at: Date | null;
}

interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  fingerprint: string;
  state: "in_flight" | "done";
  checkout_id: string | null;
  snapshot: Record<string, unknown> | null;
  created_at: Date;
}

export interface CatalogTables {
  checkouts: CheckoutsTable;
  idempotency_keys: IdempotencyKeysTable;
}

export type CheckoutRow = Selectable<CheckoutsTable>;
export type IdempotencyRow = Selectable<IdempotencyKeysTable>;
export type CatalogDb = Kysely<CatalogTables>;

export const catalogStore = {
  insertCheckout: (db: CatalogDb, row: CheckoutRow) =>
    db
      .insertInto("checkouts")
      .values({ ...row, offer: JSON.stringify(row.offer) as unknown as CheckoutRow["offer"] })
      .execute(),

  findCheckout: (db: CatalogDb, id: string) => db.selectFrom("checkouts").selectAll().where("id", "=", id).executeTakeFirst(),

  listCheckouts: (db: CatalogDb, accountId: string, includeVoided: boolean) => {
    let q = db.selectFrom("checkouts").selectAll().where("account_id", "=", accountId);
    if (!includeVoided) q = q.where("status", "!=", "void");
    return q.orderBy("created_at", "desc").orderBy("id", "desc").execute();
  },

  arm: (db: CatalogDb, id: string, now: Date) =>
    db.updateTable("checkouts").set({ armed: true, armed_at: now }).where("id", "=", id).where("armed", "=", false).returningAll().executeTakeFirst(),

  /** A single-shot checkout that sold is `paid` (reusable ones keep selling). */
  markPaid: (db: CatalogDb, id: string) =>
    db.updateTable("checkouts").set({ status: "paid" }).where("id", "=", id).where("reusable", "=", false).where("status", "=", "open").execute(),

  /** Claims an idempotency key; returns true when this request owns it now. */
  claimKey: async (db: CatalogDb, row: Omit<IdempotencyRow, "state" | "checkout_id" | "snapshot">) =>
    (await db
      .insertInto("idempotency_keys")
      .values({ ...row, state: "in_flight", checkout_id: null, snapshot: null })
      .onConflict((oc) => oc.columns(["account_id", "key"]).doNothing())
      .returning("key")
      .executeTakeFirst()) !== undefined,

  findKey: (db: CatalogDb, accountId: string, key: string) =>
    db.selectFrom("idempotency_keys").selectAll().where("account_id", "=", accountId).where("key", "=", key).executeTakeFirst(),

  completeKey: (db: CatalogDb, accountId: string, key: string, checkout: CheckoutRow) =>
    db
      .updateTable("idempotency_keys")
      .set({ state: "done", checkout_id: checkout.id, snapshot: JSON.stringify(snapshotOf(checkout)) as unknown as Record<string, unknown> })
      .where("account_id", "=", accountId)
      .where("key", "=", key)
      .execute(),

  releaseKey: (db: CatalogDb, accountId: string, key: string) =>
    db.deleteFrom("idempotency_keys").where("account_id", "=", accountId).where("key", "=", key).where("state", "=", "in_flight").execute(),

  /** Drops a key past its retention so the same key can be used afresh. */
  expireKey: (db: CatalogDb, accountId: string, key: string, olderThan: Date) =>
    db.deleteFrom("idempotency_keys").where("account_id", "=", accountId).where("key", "=", key).where("created_at", "<", olderThan).execute(),
};

/** A checkout row as JSON (bigint as text, dates as ISO) and back. */
export function snapshotOf(row: CheckoutRow): Record<string, unknown> {
  return {
    ...row,
    price_atomic: row.price_atomic.toString(),
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    armed_at: row.armed_at?.toISOString() ?? null,
  };
}

export function checkoutFromSnapshot(s: Record<string, unknown>): CheckoutRow {
  const date = (v: unknown) => (typeof v === "string" ? new Date(v) : null);
  return {
    ...(s as unknown as CheckoutRow),
    price_atomic: BigInt(s.price_atomic as string),
    created_at: new Date(s.created_at as string),
    expires_at: date(s.expires_at),
    armed_at: date(s.armed_at),
  };
}
