import { sql, type Selectable } from "kysely";
import type { FulfillmentDb } from "./origin-keys-store";
import { countTestDelivery } from "./relay-store";

interface PackagesTable {
  id: string;
  /** SHA-256 (hex) of the package key; the key itself is never stored. */
  key_hash: string;
  payment_id: string;
  checkout_id: string;
  account_id: string;
  test_mode: boolean;
  calls_included: number;
  /** Charged calls, the purchase's own included, and calls under way (refunded if they fail on the seller's side). */
  calls_used: number;
  /** The seq of the package's latest call (the purchase's call is 1). */
  last_seq: number;
  price_atomic: bigint;
  origin_url: string;
  origin_method: string;
  origin_key_id: string | null;
  one_off_credential: boolean;
  mcp: boolean;
  mcp_tool: string | null;
  test_delivery_daily_cap: number;
  created_at: Date;
  expires_at: Date | null;
}

export type CallFault = "seller" | "buyer" | "platform";

interface PackageCallsTable {
  package_id: string;
  seq: number;
  at: Date;
  state: "calling" | "done";
  counted: boolean;
  status: number;
  fault: CallFault | null;
  latency_ms: number;
  bytes: number;
  deadline_at: Date;
}

export interface PackageTables {
  packages: PackagesTable;
  package_calls: PackageCallsTable;
}

export type PackageRow = Selectable<PackagesTable>;
export type PackageCallRow = Selectable<PackageCallsTable>;
/** What a finished call records. */
export type CallResult = Pick<PackageCallRow, "counted" | "status" | "fault" | "latency_ms" | "bytes">;

/** Postgres answers bigint columns as text; the row's price as a bigint whichever driver read it. */
const withPrice = (row: PackageRow | undefined): PackageRow | undefined => row && { ...row, price_atomic: BigInt(row.price_atomic) };

/**
 * Records a new package with its purchase's call as seq 1, unless the
 * payment already has one: answers whether this call created it.
 */
export async function insertPackage(db: FulfillmentDb, row: PackageRow, firstCall: Omit<PackageCallRow, "package_id" | "seq">): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto("packages")
      .values(row)
      .onConflict((oc) => oc.column("payment_id").doNothing())
      .returning("id")
      .executeTakeFirst();
    if (!inserted) return false;
    await trx
      .insertInto("package_calls")
      .values({ ...firstCall, package_id: row.id, seq: 1 })
      .execute();
    return true;
  });
}

export async function findPackageByHash(db: FulfillmentDb, keyHash: string): Promise<PackageRow | undefined> {
  return withPrice(await db.selectFrom("packages").selectAll().where("key_hash", "=", keyHash).executeTakeFirst());
}

export async function findPackageByPayment(db: FulfillmentDb, paymentId: string): Promise<PackageRow | undefined> {
  return withPrice(await db.selectFrom("packages").selectAll().where("payment_id", "=", paymentId).executeTakeFirst());
}

/** Why a call could not start: the allowance is spent, the package expired, or (rehearsal) the checkout's daily cap is reached. */
export type NotStarted = "exhausted" | "expired" | "cap";

class CapReached extends Error {}

/**
 * Starts a call: in one transaction the allowance is decremented (only while
 * calls remain and the package has not expired, so concurrent calls can
 * never overspend it), a rehearsal package's call is counted against its
 * checkout's daily cap, and the call is recorded under its seq as under way.
 * Nothing is changed when it cannot start.
 */
export async function startCall(
  db: FulfillmentDb,
  packageId: string,
  at: Date,
  deadlineAt: Date,
  testCap?: { day: string; cap: number },
): Promise<{ pkg: PackageRow; seq: number; testDeliveriesLeft?: number } | NotStarted> {
  try {
    return await db.transaction().execute(async (trx) => {
      const pkg = await trx
        .updateTable("packages")
        .set({ calls_used: sql`calls_used + 1`, last_seq: sql`last_seq + 1` })
        .where("id", "=", packageId)
        .where(sql<boolean>`calls_used < calls_included`)
        .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", at)]))
        .returningAll()
        .executeTakeFirst();
      if (!pkg) {
        const current = await trx.selectFrom("packages").select("expires_at").where("id", "=", packageId).executeTakeFirst();
        return current?.expires_at && current.expires_at <= at ? "expired" : "exhausted";
      }
      const left = testCap ? await countTestDelivery(trx, pkg.checkout_id, testCap) : undefined;
      if (testCap && left === undefined) throw new CapReached();
      await trx
        .insertInto("package_calls")
        .values({
          package_id: packageId,
          seq: pkg.last_seq,
          at,
          state: "calling",
          counted: true,
          status: 0,
          fault: null,
          latency_ms: 0,
          bytes: 0,
          deadline_at: deadlineAt,
        })
        .execute();
      return { pkg: withPrice(pkg) as PackageRow, seq: pkg.last_seq, ...(left !== undefined ? { testDeliveriesLeft: left } : {}) };
    });
  } catch (err) {
    if (err instanceof CapReached) return "cap";
    throw err;
  }
}

/**
 * Starts a call of a live package in one statement (the hot path of package
 * calls): the allowance is decremented only while calls remain and the
 * package has not expired, and the call is recorded under way with the seq
 * it took. Answers the package after the decrement and the call's seq, or
 * undefined when it could not start (the caller reads why).
 */
export async function startLiveCall(db: FulfillmentDb, packageId: string, at: Date, deadlineAt: Date): Promise<{ pkg: PackageRow; seq: number } | undefined> {
  const row = await db
    .with("spent", (qb) =>
      qb
        .updateTable("packages")
        .set({ calls_used: sql`calls_used + 1`, last_seq: sql`last_seq + 1` })
        .where("id", "=", packageId)
        .where("test_mode", "=", false)
        .where(sql<boolean>`calls_used < calls_included`)
        .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", at)]))
        .returningAll(),
    )
    .with("recorded", (qb) =>
      qb
        .insertInto("package_calls")
        .columns(["package_id", "seq", "at", "state", "counted", "status", "latency_ms", "bytes", "deadline_at"])
        .expression((eb) =>
          eb
            .selectFrom("spent")
            .select((s) => [
              "spent.id",
              "spent.last_seq",
              sql<Date>`${at}`.as("at"),
              sql<string>`'calling'`.as("state"),
              sql<boolean>`true`.as("counted"),
              sql<number>`0`.as("status"),
              sql<number>`0`.as("latency_ms"),
              sql<number>`0`.as("bytes"),
              s.val(deadlineAt).as("deadline_at"),
            ]),
        ),
    )
    .selectFrom("spent")
    .selectAll()
    .executeTakeFirst();
  const pkg = withPrice(row as PackageRow | undefined);
  return pkg && { pkg, seq: pkg.last_seq };
}

/** Records a counted call's result in one statement (the hot path), unless the sweep finished it already. */
export async function finishCountedCall(db: FulfillmentDb, packageId: string, seq: number, result: Omit<CallResult, "counted">): Promise<void> {
  await db
    .updateTable("package_calls")
    .set({ ...result, counted: true, state: "done" })
    .where("package_id", "=", packageId)
    .where("seq", "=", seq)
    .where("state", "=", "calling")
    .execute();
}

/**
 * Records a call's result unless it was finished already (by the sweep): an
 * uncounted one gives its call back to the allowance in the same
 * transaction, so a refund happens once. Answers the package as it stands.
 */
export async function finishCall(db: FulfillmentDb, packageId: string, seq: number, result: CallResult): Promise<PackageRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const finished = await trx
      .updateTable("package_calls")
      .set({ ...result, state: "done" })
      .where("package_id", "=", packageId)
      .where("seq", "=", seq)
      .where("state", "=", "calling")
      .returning("seq")
      .executeTakeFirst();
    if (finished && !result.counted) {
      await trx
        .updateTable("packages")
        .set({ calls_used: sql`calls_used - 1` })
        .where("id", "=", packageId)
        .execute();
    }
    return withPrice(await trx.selectFrom("packages").selectAll().where("id", "=", packageId).executeTakeFirst());
  });
}

/** Calls still under way past `cutoff` (their deadline plus a grace): a crash cut them off. */
export function overdueCalls(db: FulfillmentDb, cutoff: Date, limit: number): Promise<Pick<PackageCallRow, "package_id" | "seq">[]> {
  return db
    .selectFrom("package_calls")
    .select(["package_id", "seq"])
    .where("state", "=", "calling")
    .where("deadline_at", "<", cutoff)
    .orderBy("deadline_at")
    .limit(limit)
    .execute();
}

/** One page of a package's calls, newest first: at most `size` before seq `beforeSeq` (absent: the newest). */
export function listCalls(db: FulfillmentDb, packageId: string, size: number, beforeSeq?: number): Promise<PackageCallRow[]> {
  let q = db.selectFrom("package_calls").selectAll().where("package_id", "=", packageId);
  if (beforeSeq !== undefined) q = q.where("seq", "<", beforeSeq);
  return q.orderBy("seq", "desc").limit(size).execute();
}

/** Counted calls of a package since `since`. */
export async function countedCallsSince(db: FulfillmentDb, packageId: string, since: Date): Promise<number> {
  const row = await db
    .selectFrom("package_calls")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("package_id", "=", packageId)
    .where("counted", "=", true)
    .where("at", ">=", since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** How many of an account's package calls since `since` were given back for the seller's failure. */
export async function countSellerFailedCalls(db: FulfillmentDb, accountId: string, since: Date, testMode: boolean): Promise<number> {
  const row = await db
    .selectFrom("package_calls")
    .innerJoin("packages", "packages.id", "package_calls.package_id")
    .select(sql<string>`count(*)::text`.as("n"))
    .where("packages.account_id", "=", accountId)
    .where("packages.test_mode", "=", testMode)
    .where("package_calls.fault", "=", "seller")
    .where("package_calls.at", ">=", since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** What live packages owe: how many, their unspent calls, and the part of their price those stand for (rounded down per package). */
export interface Liabilities {
  liveKeys: number;
  callsUnspent: bigint;
  unearnedAtomic: bigint;
}

const UNSPENT = sql<string>`coalesce(sum(calls_included - calls_used), 0)::text`;
const UNEARNED = sql<string>`coalesce(sum(price_atomic * (calls_included - calls_used) / calls_included), 0)::text`;

/** Live (not rehearsal) packages that are neither expired nor used up at `at`, of an account or of one checkout. */
function livePackagesOf(db: FulfillmentDb, of: { accountId: string } | { checkoutId: string }, at: Date) {
  return db
    .selectFrom("packages")
    .where("accountId" in of ? "account_id" : "checkout_id", "=", "accountId" in of ? of.accountId : of.checkoutId)
    .where("test_mode", "=", false)
    .where(sql<boolean>`calls_used < calls_included`)
    .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", at)]));
}

const liabilitiesOfRow = (r: { live_keys: string; calls_unspent: string; unearned_atomic: string }): Liabilities => ({
  liveKeys: Number(r.live_keys),
  callsUnspent: BigInt(r.calls_unspent),
  unearnedAtomic: BigInt(r.unearned_atomic),
});

/** What the live packages of an account, or of one checkout, still owe in total. */
export async function liabilities(db: FulfillmentDb, of: { accountId: string } | { checkoutId: string }, at: Date): Promise<Liabilities> {
  const row = await livePackagesOf(db, of, at)
    .select([sql<string>`count(*)::text`.as("live_keys"), UNSPENT.as("calls_unspent"), UNEARNED.as("unearned_atomic")])
    .executeTakeFirstOrThrow();
  return liabilitiesOfRow(row);
}

/** What an account's live packages still owe per checkout, most unearned first, at most `limit` checkouts. */
export async function liabilitiesPerCheckout(db: FulfillmentDb, accountId: string, at: Date, limit: number): Promise<(Liabilities & { checkoutId: string })[]> {
  const rows = await livePackagesOf(db, { accountId }, at)
    .select(["checkout_id", sql<string>`count(*)::text`.as("live_keys"), UNSPENT.as("calls_unspent"), UNEARNED.as("unearned_atomic")])
    .groupBy("checkout_id")
    .orderBy(sql`sum(price_atomic * (calls_included - calls_used) / calls_included)`, "desc")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ checkoutId: r.checkout_id, ...liabilitiesOfRow(r) }));
}
