import type { SenderNoncesTables } from "@c402/sender-nonces";
import { eventAfter, type OutboxRow } from "@c402/bus";
import { reusableStatement } from "@c402/db";
import { sql, type Kysely, type QueryCreator, type Selectable, type SelectQueryBuilder } from "kysely";

interface PaymentsTable {
  id: string;
  checkout_id: string;
  account_id: string;
  checkout_title: string;
  network: string;
  asset: string;
  payer: string;
  nonce: string;
  authorization: Record<string, string>;
  price_atomic: bigint;
  provider_amount: bigint;
  platform_amount: bigint | null;
  /** The checkout's platform cut as sold (0: none) and the wallet it is paid to. */
  platform_fee_bps: number;
  platform_fee_to: string | null;
  fee_amount: bigint;
  total: bigint;
  pay_to: string;
  subject: string;
  /** Set once the settle transaction is signed (live) or simulated (rehearsal). */
  tx_hash: string | null;
  test_mode: boolean;
  status: PaymentStatus;
  delivery_outcome: string;
  handoff_id: string | null;
  sold_by: string | null;
  /** The checkout's declared parties as sold ({buyer, seller}), verbatim. */
  parties: Record<string, unknown> | null;
  settled_at: Date | null;
  raw_tx: string | null;
  split_address: string | null;
  single_shot: boolean;
  failure_reason: string | null;
  valid_before: bigint | null;
  updated_at: Date;
  /** A relay or mcp claim: when the buyer's request stops waiting; it settles only before then (ADR 9). Null otherwise. */
  answer_by: Date | null;
  /** How the sale is fulfilled: inline goods, or a relay origin or an MCP tool called before settling (paid only on delivery). */
  fulfillment: "inline" | "relay" | "mcp" | "webhook";
  /** A relay delivery as the receipt shows it (null for inline and until delivered). */
  delivery_status: number | null;
  delivery_latency_ms: number | null;
  delivery_bytes: number | null;
  /** A webhook sale: when the seller marked it fulfilled (null until then, and for other modes). */
  fulfilled_at: Date | null;
  /** A series' payment (ADR 20): its schedule (sch_) and period (0: the purchase); null for other sales. */
  schedule_id: string | null;
  schedule_period: number | null;
  /** Period 0 of a series: the series as bought (SeriesRecord: terms, anchor, the signed held authorizations). Null otherwise. */
  series: Record<string, unknown> | null;
}

/** A held authorization's cancel as recorded before it is sent (ADR 20). */
export interface HeldCancelsTable {
  schedule_id: string;
  nonce: string;
  period: number;
  network: string;
  tx_hash: string;
  raw_tx: string;
  /** sent | cancelled | failed */
  status: string;
  created_at: Date;
}

/**
 * The saga (ADR 8, ADR 9): claimed -> [delivered ->] settling -> settled |
 * failed. `delivered`: a relay origin's charged answer is recorded and nothing
 * is broadcast yet.
 */
/**
 * Where a payment is in its saga. An escrow sale (ADR 19) ends `held` once its
 * deposit is in escrow (no receipt, no payment.settled), then `settled` when
 * the escrow releases it to the seller or `refunded` when it goes back to the buyer.
 */
export type PaymentStatus = "claimed" | "delivered" | "settling" | "settled" | "held" | "refunded" | "failed";

/** The next nonce of a key that signs here, per chain (ADR 11). */

export interface PaymentsTables extends SenderNoncesTables {
  payments: PaymentsTable;
  held_cancels: HeldCancelsTable;
}

export type PaymentRow = Selectable<PaymentsTable>;
export type PaymentsDb = Kysely<PaymentsTables>;
/** What identifies a payment (a unique index): its authorization (payer, nonce) on one token, rehearsal or live. */
/** A page of settled payments, newest first by (settled_at, id): the ones after the cursor, at most `size`. */
function newestSettledFirst<Q extends SelectQueryBuilder<PaymentsTables, "payments", PaymentRow>>(
  q: Q,
  page: { size: number; after?: { settledAt: Date; id: string } },
) {
  const after = page.after;
  const afterCursor = after ? q.where((eb) => eb(eb.refTuple("settled_at", "id"), "<", eb.tuple(after.settledAt, after.id))) : q;
  return afterCursor.orderBy("settled_at", "desc").orderBy("id", "desc").limit(page.size);
}

/** Which of an account's receipts a ledger read keeps. */
export interface LedgerFilter {
  testMode: boolean;
  soldBy?: string;
  /** settled_at at or after. */
  from?: Date;
  /** settled_at before. */
  to?: Date;
}

export type AuthorizationKey = Pick<PaymentRow, "test_mode" | "network" | "asset" | "payer" | "nonce">;

/** A payment row as its insert writes it: the JSON columns as their text. */
function columnsOf(row: PaymentRow): PaymentRow {
  return {
    ...row,
    authorization: JSON.stringify(row.authorization) as unknown as Record<string, string>,
    parties: (row.parties === null ? null : JSON.stringify(row.parties)) as unknown as Record<string, unknown>,
    series: (row.series === null ? null : JSON.stringify(row.series)) as unknown as Record<string, unknown>,
  };
}

/** The insert of a payment row (its columns, see columnsOf) that does nothing when its authorization was already used; returns its id. */
function insertUnlessUsed(db: QueryCreator<PaymentsTables>, columns: PaymentRow) {
  return (
    db
      .insertInto("payments")
      .values(columns)
      // No conflict target: every unique index is an arbiter. With only the authorization as target, a
      // duplicate racing the first insert could trip "one sale per single-shot checkout" first and fail
      // instead of finding the first; the caller tells the two apart by looking the authorization up.
      .onConflict((oc) => oc.doNothing())
      .returning("id")
  );
}

/** Every paid rehearsal runs it: built once (see reusableStatement). */
const insertSettledWithEvent = reusableStatement((db: PaymentsDb, v: { columns: PaymentRow; event: OutboxRow }) =>
  db
    .with("inserted", (q) => insertUnlessUsed(q, v.columns))
    .with("event", eventAfter("inserted", v.event))
    .selectFrom("inserted")
    .select("id"),
);

/** Moves payments on in their saga, each only from a state in `from` (a concurrent step got there first otherwise); answers those it moved. */
function advanceEach(db: PaymentsDb, ids: readonly string[], from: PaymentStatus[], set: Partial<PaymentRow>) {
  return db
    .updateTable("payments")
    .set({ ...set, updated_at: new Date() })
    .where("id", "in", ids)
    .where("status", "in", from)
    .returningAll()
    .execute();
}

export const paymentsStore = {
  /**
   * Inserts the payment unless its authorization was already used or, for a
   * live single-shot checkout, a sale is already recorded; true when inserted.
   */
  insertIfNew: async (db: PaymentsDb, row: PaymentRow) => (await insertUnlessUsed(db, columnsOf(row)).executeTakeFirst()) !== undefined,

  /**
   * Records a rehearsal payment settled and its event in one statement, unless
   * its authorization was already used; true when recorded.
   */
  insertSettledWithEvent: async (db: PaymentsDb, row: PaymentRow, event: OutboxRow) =>
    (await insertSettledWithEvent(db, { columns: columnsOf(row), event })).rows.length > 0,

  findByAuthorization: (db: PaymentsDb, key: AuthorizationKey) =>
    db
      .selectFrom("payments")
      .selectAll()
      .where("test_mode", "=", key.test_mode)
      .where("network", "=", key.network)
      .where("asset", "=", key.asset)
      .where("payer", "=", key.payer)
      .where("nonce", "=", key.nonce)
      .executeTakeFirst(),

  findSettledByTx: (db: PaymentsDb, txHash: string) =>
    db.selectFrom("payments").select("id").where("tx_hash", "=", txHash).where("status", "=", "settled").orderBy("settled_at").executeTakeFirst(),

  /** The settled (or escrow-held) payment of a checkout that arrived with a handoff nonce. */
  findSettledByHandoff: (db: PaymentsDb, checkoutId: string, handoffId: string) =>
    db
      .selectFrom("payments")
      .selectAll()
      .where("checkout_id", "=", checkoutId)
      .where("handoff_id", "=", handoffId)
      .where("status", "in", ["settled", "held"])
      .orderBy("settled_at")
      .executeTakeFirst(),

  /** The payment of one period of a series (0: the purchase that holds the series). */
  findSeriesPeriod: (db: PaymentsDb, scheduleId: string, period: number) =>
    db.selectFrom("payments").selectAll().where("schedule_id", "=", scheduleId).where("schedule_period", "=", period).executeTakeFirst(),

  /** How many periods of a series are settled. */
  settledPeriods: async (db: PaymentsDb, scheduleId: string) =>
    Number(
      (
        await db
          .selectFrom("payments")
          .select(sql<string>`count(*)`.as("n"))
          .where("schedule_id", "=", scheduleId)
          .where("status", "=", "settled")
          .executeTakeFirstOrThrow()
      ).n,
    ),

  /**
   * A held period's payment that failed before anything was signed because the payer's balance was short:
   * nothing was sent and nothing is owed, so the row goes and the period can be charged again inside its window.
   */
  releaseShortPeriod: async (db: PaymentsDb, id: string) =>
    (
      await db
        .deleteFrom("payments")
        .where("id", "=", id)
        .where("status", "=", "failed")
        .where("failure_reason", "=", "insufficient_funds")
        .where("tx_hash", "is", null)
        .where("schedule_period", ">", 0)
        .executeTakeFirst()
    ).numDeletedRows > 0n,

  findById: (db: PaymentsDb, id: string) => db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirst(),

  /** Moves a payment on in its saga; `from` guards against a concurrent step. */
  advance: async (db: PaymentsDb, id: string, from: PaymentStatus[], set: Partial<PaymentRow>) => (await advanceEach(db, [id], from, set))[0],

  /** Moves several payments on together (as `advance` does each); answers those it moved. */
  advanceEach,

  /**
   * Moves a payment to `settled` (as `advance` does) and writes its event in the
   * same statement; undefined when a concurrent step got there first.
   */
  settleWithEvent: (db: PaymentsDb, id: string, from: PaymentStatus[], set: Partial<PaymentRow>, event: OutboxRow) =>
    db
      .with("settled", (q) =>
        q
          .updateTable("payments")
          .set({ ...set, status: "settled", updated_at: new Date() })
          .where("id", "=", id)
          .where("status", "in", from)
          .returningAll(),
      )
      .with("event", eventAfter("settled", event))
      .selectFrom("settled")
      .selectAll()
      .executeTakeFirst(),

  /**
   * A relay or mcp claim that will not settle: its delivery was not charged
   * (or never happened), or its buyer's request stopped waiting before it
   * could settle (claimed or delivered, ADR 9). Nothing was broadcast and
   * nothing is owed, so the row goes and the authorization is free to be
   * presented again. Answers whether it was released.
   */
  release: async (db: PaymentsDb, id: string) =>
    (
      await db
        .deleteFrom("payments")
        .where("id", "=", id)
        .where("status", "in", ["claimed", "delivered"])
        .where("fulfillment", "in", ["relay", "mcp"])
        .executeTakeFirst()
    ).numDeletedRows > 0n,

  /** One page of the account's settled webhook sales not marked fulfilled, newest first (index payments_awaiting_fulfilment). */
  awaitingFulfilment: (db: PaymentsDb, accountId: string, page: { size: number; after?: { settledAt: Date; id: string } }) => {
    const q = db
      .selectFrom("payments")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("fulfillment", "=", "webhook")
      .where("status", "=", "settled")
      .where("fulfilled_at", "is", null);
    return newestSettledFirst(q, page).execute();
  },

  /** One page of the account's ledger (index payments_ledger): settled payments of one mode, newest first, filtered. */
  ledger: (db: PaymentsDb, accountId: string, filter: LedgerFilter, page: { size: number; after?: { settledAt: Date; id: string } }) => {
    let q = db.selectFrom("payments").selectAll().where("account_id", "=", accountId).where("test_mode", "=", filter.testMode).where("status", "=", "settled");
    if (filter.soldBy !== undefined) q = q.where("sold_by", "=", filter.soldBy);
    if (filter.from) q = q.where("settled_at", ">=", filter.from);
    if (filter.to) q = q.where("settled_at", "<", filter.to);
    // A cursor at or past `to` is implied by it; left in, the index scan would start at the cursor and walk down to `to`.
    const impliedByTo = page.after && filter.to && page.after.settledAt.getTime() >= filter.to.getTime();
    return newestSettledFirst(q, impliedByTo ? { size: page.size } : page).execute();
  },

  /**
   * An account's settled sales of one mode since a time, summed exactly
   * (numeric sums answered as text), grouped by `by`: per UTC day, per
   * checkout, or one row for the whole window.
   */
  salesSums: (db: PaymentsDb, accountId: string, since: Date, testMode: boolean, by: "day" | "checkout" | "all") => {
    const key =
      by === "day" ? sql<string>`to_char(settled_at at time zone 'UTC', 'YYYY-MM-DD')` : by === "checkout" ? sql<string>`checkout_id` : sql<string>`''`;
    let q = db
      .selectFrom("payments")
      .select([
        key.as("key"),
        sql<string>`min(checkout_title)`.as("title"),
        sql<string>`count(*)::text`.as("payments"),
        sql<string>`coalesce(sum(price_atomic), 0)::text`.as("price_amount"),
        sql<string>`coalesce(sum(provider_amount), 0)::text`.as("provider_amount"),
        sql<string>`coalesce(sum(platform_amount), 0)::text`.as("platform_amount"),
        sql<string>`coalesce(sum(fee_amount), 0)::text`.as("fee_amount"),
        sql<string>`coalesce(sum(total), 0)::text`.as("total"),
      ])
      .where("account_id", "=", accountId)
      .where("test_mode", "=", testMode)
      .where("status", "=", "settled")
      .where("settled_at", ">=", since);
    if (by !== "all") q = q.groupBy(sql`1`);
    return by === "checkout"
      ? q
          .orderBy(sql`coalesce(sum(provider_amount), 0)`, "desc")
          .limit(100)
          .execute()
      : q.orderBy(sql`1`).execute();
  },

  /** The distinct buyers (by subject) of an account's settled sales of one mode since a time, and how many bought at least twice. */
  buyers: async (db: PaymentsDb, accountId: string, since: Date, testMode: boolean) => {
    const row = await db
      .selectFrom((qb) =>
        qb
          .selectFrom("payments")
          .select(["subject", sql<string>`count(*)`.as("n")])
          .where("account_id", "=", accountId)
          .where("test_mode", "=", testMode)
          .where("status", "=", "settled")
          .where("settled_at", ">=", since)
          .groupBy("subject")
          .as("per_buyer"),
      )
      .select([sql<string>`count(*)::text`.as("distinct"), sql<string>`count(*) filter (where n >= 2)::text`.as("returning")])
      .executeTakeFirstOrThrow();
    return { distinct: Number(row.distinct), returning: Number(row.returning) };
  },

  /** Marks a settled webhook sale of the account fulfilled, with its account event, unless it was; the row after. */
  markFulfilled: (db: PaymentsDb, accountId: string, id: string, at: Date, event: OutboxRow) =>
    db
      .with("marked", (q) =>
        q
          .updateTable("payments")
          .set({ fulfilled_at: at, delivery_outcome: "fulfilled", updated_at: at })
          .where("id", "=", id)
          .where("account_id", "=", accountId)
          .where("fulfillment", "=", "webhook")
          .where("status", "=", "settled")
          .where("fulfilled_at", "is", null)
          .returningAll(),
      )
      .with("event", eventAfter("marked", event))
      .selectFrom("marked")
      .selectAll()
      .executeTakeFirst(),

  /** How many payments wait in each unfinished saga state, per kind, and how long the quietest has not moved (seconds). */
  unfinishedCounts: async (db: PaymentsDb) => {
    const rows = await db
      .selectFrom("payments")
      .select(["status", "test_mode", sql<bigint | number>`count(*)`.as("count"), sql<string>`extract(epoch from now() - min(updated_at))`.as("oldest")])
      .where("status", "in", ["claimed", "delivered", "settling"])
      .groupBy(["status", "test_mode"])
      .execute();
    return rows.map((r) => ({ state: r.status, testMode: r.test_mode, count: Number(r.count), oldestSeconds: Math.max(0, Number(r.oldest)) }));
  },

  /** Payments of one kind (live or rehearsal) left unfinished (a crash, a timeout) and quiet for a while. */
  /** Unfinished payments quiet since `quietSince`, oldest first; of `networks` only when given (each live rail sweeps its own). */
  unfinished: (db: PaymentsDb, testMode: boolean, quietSince: Date, limit: number, networks?: readonly string[], sales: "escrow" | "plain" | "all" = "all") =>
    db
      .selectFrom("payments")
      .selectAll()
      .where("status", "in", ["claimed", "delivered", "settling"])
      .where("test_mode", "=", testMode)
      .$if(networks !== undefined, (q) => q.where("network", "in", networks as string[]))
      // An escrow sale (esc_ checkout) is deposited by the escrow service, never settled by a rail's own transaction.
      .$if(sales !== "all", (q) => q.where("checkout_id", sales === "escrow" ? "like" : "not like", "esc\\_%"))
      .where("updated_at", "<", quietSince)
      .orderBy("updated_at")
      .limit(limit)
      .execute(),
};
