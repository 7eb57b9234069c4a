import { sql, type ExpressionBuilder, type Kysely, type Selectable } from "kysely";
import { reusableStatement } from "@c402/db";
import type { KeyMode, Parties, StoredStatus } from "../domain/checkout-rules";
import type { EscrowTerms } from "../domain/escrow-rules";
import type { ScheduleTerms } from "../domain/schedule-rules";

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
  voided_at: Date | null;
  expiry_recorded_at: Date | null;
  /** The platform-declared identities, verbatim ({buyer, seller}). */
  parties: Parties | null;
  platform_fee_bps: number;
  /** The wallet the platform cut is paid to (frozen at create); null without a cut. */
  platform_fee_to: string | null;
  /** The platform's fee wallets beyond platform_fee_to (its EVM one), frozen at create: address by chain family; {} without a cut. */
  platform_fee_rails: Record<string, string>;
  /** What receipts name the platform that created it; null unless a platform account did. */
  sold_by: string | null;
  inherit_account_payouts: boolean;
  wallet_button: boolean;
  test_delivery_daily_cap: number;
  /** Payout rails beyond pay_to (the EVM one): address by chain family ("solana", "stellar"). */
  payout_rails: Record<string, string>;
  /** A relay checkout's origin (all null for inline); never its credential. */
  origin_url: string | null;
  origin_method: string | null;
  origin_auth_type: string | null;
  origin_auth_header: string | null;
  origin_key_id: string | null;
  /** Fulfillment keeps a one-off credential for this checkout alone. */
  origin_one_off: boolean;
  /** The one tool a per-tool mcp checkout sells (null: any tool of the server, or not mcp). */
  mcp_tool: string | null;
  /** A package checkout: calls one payment buys, and days a package stays spendable (both null otherwise). */
  max_deliveries: number | null;
  package_ttl_days: number | null;
  /** A gated article's declaration (JSON text, normalized by content-rules.ts); null for every other checkout. */
  content_json: string | null;
  /** An escrow checkout's terms (esc_, faces /e/{id}), frozen at create; null for every other checkout. */
  escrow: EscrowTerms | null;
  /** An escrow_offer=optional checkout and its escrow twin name each other here; null otherwise. */
  escrow_twin_id: string | null;
  /** A recurring series' terms, frozen at create; null for every other checkout. */
  schedule: ScheduleTerms | null;
}

interface IdempotencyKeysTable {
  account_id: string;
  mode: KeyMode;
  key: string;
  fingerprint: string;
  state: "in_flight" | "done";
  checkout_id: string | null;
  snapshot: Record<string, unknown> | null;
  created_at: Date;
  /** Who holds an in-flight claim: only that create may complete it. */
  claim_token: string | null;
  claimed_at: Date;
}

/** A test twin of the retired twin-row model and the live checkout it stood for (migration 0018). */
interface RetiredTwinsTable {
  twin_id: string;
  live_id: string;
}

export interface CatalogTables {
  checkouts: CheckoutsTable;
  idempotency_keys: IdempotencyKeysTable;
  retired_twins: RetiredTwinsTable;
}

export type CheckoutRow = Selectable<CheckoutsTable>;
export type CatalogDb = Kysely<CatalogTables>;

/** What a list carries: every column but the goods and the offer card, which are never read for a list. */
export const CHECKOUT_SUMMARY_COLUMNS = [
  "id",
  "account_id",
  "title",
  "description",
  "price_atomic",
  "pay_to",
  "fulfillment",
  "reusable",
  "armed",
  "armed_at",
  "status",
  "created_at",
  "expires_at",
  "voided_at",
  "payout_rails",
  "max_deliveries",
  "package_ttl_days",
  "escrow",
  "escrow_twin_id",
  "schedule",
] as const satisfies readonly (keyof CheckoutsTable)[];
export type CheckoutSummaryRow = Pick<CheckoutRow, (typeof CHECKOUT_SUMMARY_COLUMNS)[number]>;
/** A checkout of the public catalogue: the summary and the offer card. */
export type SellingRow = CheckoutSummaryRow & Pick<CheckoutRow, "offer">;

/** One page of a newest-first list: at most `size` checkouts after `after` in (created_at, id) order. */
export interface CheckoutPage {
  size: number;
  after?: { createdAt: Date; id: string };
}

/** Which idempotency key a request names: keys are scoped per account and per key mode. */
export interface IdempotencyScope {
  accountId: string;
  mode: KeyMode;
  key: string;
}

const inScope = (eb: ExpressionBuilder<CatalogTables, "idempotency_keys">, s: IdempotencyScope) =>
  eb.and({ account_id: s.accountId, mode: s.mode, key: s.key });

/**
 * A checkout row's revision (ADR 14): the transaction id that wrote this
 * version of it. PostgreSQL gives every version a row takes its own (an update
 * writes a new version, whatever statement makes it), so no write can forget
 * to change it.
 */
const revision = sql<string>`xmin::text`.as("revision");

/** Every payment and quote reads its checkout, with its revision: built once (see reusableStatement). */
const findCheckout = reusableStatement((db: CatalogDb, v: { id: string }) => db.selectFrom("checkouts").selectAll().select(revision).where("id", "=", v.id));

/** What a caller holding a checkout's revision needs each time: whether it is current, and the status's inputs. */
const findCheckoutState = reusableStatement((db: CatalogDb, v: { id: string }) =>
  db.selectFrom("checkouts").select(["account_id", "status", "voided_at", "expires_at", revision]).where("id", "=", v.id),
);

export const catalogStore = {
  /** The live checkout a retired twin stood for, or undefined. */
  liveOfRetiredTwin: async (db: CatalogDb, twinId: string): Promise<string | undefined> =>
    (await db.selectFrom("retired_twins").select("live_id").where("twin_id", "=", twinId).executeTakeFirst())?.live_id,
  insertCheckout: (db: CatalogDb, row: CheckoutRow) =>
    db
      .insertInto("checkouts")
      .values({
        ...row,
        offer: JSON.stringify(row.offer) as unknown as CheckoutRow["offer"],
        parties: (row.parties === null ? null : JSON.stringify(row.parties)) as unknown as CheckoutRow["parties"],
        payout_rails: JSON.stringify(row.payout_rails) as unknown as CheckoutRow["payout_rails"],
        platform_fee_rails: JSON.stringify(row.platform_fee_rails) as unknown as CheckoutRow["platform_fee_rails"],
        escrow: (row.escrow === null ? null : JSON.stringify(row.escrow)) as unknown as CheckoutRow["escrow"],
        schedule: (row.schedule === null ? null : JSON.stringify(row.schedule)) as unknown as CheckoutRow["schedule"],
      })
      .execute(),

  findCheckout: async (db: CatalogDb, id: string) => (await findCheckout(db, { id })).rows[0],

  findCheckoutState: async (db: CatalogDb, id: string) => (await findCheckoutState(db, { id })).rows[0],

  /** A keyset page (index checkouts_account_page), summary columns only. */
  listCheckouts: (db: CatalogDb, accountId: string, includeVoided: boolean, page: CheckoutPage): Promise<CheckoutSummaryRow[]> => {
    let q = db.selectFrom("checkouts").select(CHECKOUT_SUMMARY_COLUMNS).where("account_id", "=", accountId);
    if (!includeVoided) q = q.where("voided_at", "is", null);
    const after = page.after;
    if (after) q = q.where((eb) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)));
    return q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.size).execute();
  },

  /**
   * A keyset page of what the account sells at `now` (index checkouts_selling_page):
   * armed, not void, not a sold single-shot, deadline not passed. Summary
   * columns and the offer card, never the goods.
   */
  listSelling: (db: CatalogDb, accountId: string, now: Date, page: CheckoutPage): Promise<SellingRow[]> => {
    let q = db
      .selectFrom("checkouts")
      .select([...CHECKOUT_SUMMARY_COLUMNS, "offer"])
      .where("account_id", "=", accountId)
      .where("voided_at", "is", null)
      .where("status", "=", "open")
      .where("armed", "=", true)
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]));
    const after = page.after;
    if (after) q = q.where((eb) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)));
    return q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.size).execute();
  },

  /** The checkout, locked for a change in the caller's transaction. */
  lockCheckout: (db: CatalogDb, id: string) => db.selectFrom("checkouts").selectAll().where("id", "=", id).forUpdate().executeTakeFirst(),

  updateCheckout: (db: CatalogDb, id: string, set: Partial<Omit<CheckoutRow, "id" | "account_id" | "offer">> & { offer?: Record<string, string | null> }) =>
    db
      .updateTable("checkouts")
      .set({
        ...set,
        ...(set.offer ? { offer: JSON.stringify(set.offer) as unknown as CheckoutRow["offer"] } : {}),
        ...(set.payout_rails ? { payout_rails: JSON.stringify(set.payout_rails) as unknown as CheckoutRow["payout_rails"] } : {}),
      })
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirstOrThrow(),

  /**
   * Claims up to `limit` checkouts whose deadline passed and was not recorded
   * yet, marking it recorded (index checkouts_expiry_due); rows another sweep
   * holds are skipped, not waited for. Run in the transaction that writes the events.
   */
  claimExpired: (db: CatalogDb, now: Date, limit: number) =>
    db
      .updateTable("checkouts")
      .set({ expiry_recorded_at: now })
      .where("id", "in", (eb) =>
        eb
          .selectFrom("checkouts")
          .select("id")
          .where("expiry_recorded_at", "is", null)
          .where("voided_at", "is", null)
          .where("status", "=", "open")
          .where("expires_at", "is not", null)
          .where("expires_at", "<=", now)
          .orderBy("expires_at")
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .returningAll()
      .execute(),

  arm: (db: CatalogDb, id: string, now: Date) =>
    db.updateTable("checkouts").set({ armed: true, armed_at: now }).where("id", "=", id).where("armed", "=", false).returningAll().executeTakeFirst(),

  /** A single-shot checkout that sold is `paid` (reusable ones keep selling). */
  markPaid: (db: CatalogDb, id: string) =>
    db.updateTable("checkouts").set({ status: "paid" }).where("id", "=", id).where("reusable", "=", false).where("status", "=", "open").execute(),

  /**
   * Claims an idempotency key for the create holding `token`; true when it
   * owns the key now. A free key is claimed; so is an in-flight claim taken
   * before `abandonedBefore`, whose create died (its commit, which needs its
   * own token, can no longer happen).
   */
  claimKey: async (db: CatalogDb, scope: IdempotencyScope, claim: { fingerprint: string; token: string; at: Date; abandonedBefore: Date }) => {
    const inserted = await db
      .insertInto("idempotency_keys")
      .values({
        account_id: scope.accountId,
        mode: scope.mode,
        key: scope.key,
        fingerprint: claim.fingerprint,
        state: "in_flight",
        checkout_id: null,
        snapshot: null,
        created_at: claim.at,
        claim_token: claim.token,
        claimed_at: claim.at,
      })
      .onConflict((oc) => oc.columns(["account_id", "mode", "key"]).doNothing())
      .returning("key")
      .executeTakeFirst();
    if (inserted) return true;
    const takenOver = await db
      .updateTable("idempotency_keys")
      .set({ fingerprint: claim.fingerprint, claim_token: claim.token, claimed_at: claim.at, created_at: claim.at })
      .where((eb) => inScope(eb, scope))
      .where("state", "=", "in_flight")
      .where("claimed_at", "<", claim.abandonedBefore)
      .executeTakeFirst();
    return takenOver.numUpdatedRows > 0n;
  },

  findKey: (db: CatalogDb, scope: IdempotencyScope) =>
    db
      .selectFrom("idempotency_keys")
      .selectAll()
      .where((eb) => inScope(eb, scope))
      .executeTakeFirst(),

  /** Records the create's answer on its key, in the create's transaction; false when the claim is no longer this create's. */
  completeKey: async (db: CatalogDb, scope: IdempotencyScope, token: string, checkout: CheckoutRow) =>
    (
      await db
        .updateTable("idempotency_keys")
        .set({
          state: "done",
          claim_token: null,
          checkout_id: checkout.id,
          snapshot: JSON.stringify(snapshotOf(checkout)) as unknown as Record<string, unknown>,
        })
        .where((eb) => inScope(eb, scope))
        .where("state", "=", "in_flight")
        .where("claim_token", "=", token)
        .executeTakeFirst()
    ).numUpdatedRows > 0n,

  /** Frees a key whose create failed, if this create still holds it. */
  releaseKey: (db: CatalogDb, scope: IdempotencyScope, token: string) =>
    db
      .deleteFrom("idempotency_keys")
      .where((eb) => inScope(eb, scope))
      .where("state", "=", "in_flight")
      .where("claim_token", "=", token)
      .execute(),

  /** Drops up to `limit` keys (of any account) claimed before `olderThan`; answers how many. */
  reapKeys: async (db: CatalogDb, olderThan: Date, limit: number) =>
    Number(
      (
        await db
          .deleteFrom("idempotency_keys")
          .where((eb) =>
            eb(
              eb.refTuple("account_id", "mode", "key"),
              "in",
              eb
                .selectFrom("idempotency_keys")
                .select(["account_id", "mode", "key"])
                .where("created_at", "<", olderThan)
                .limit(limit)
                .$asTuple("account_id", "mode", "key"),
            ),
          )
          .executeTakeFirst()
      ).numDeletedRows,
    ),

  /** Drops a key past its retention so the same key can be used afresh. */
  expireKey: (db: CatalogDb, scope: IdempotencyScope, olderThan: Date) =>
    db
      .deleteFrom("idempotency_keys")
      .where((eb) => inScope(eb, scope))
      .where("created_at", "<", olderThan)
      .execute(),
};

/** A checkout row as JSON (bigint as text, dates as ISO) and back. */
export function snapshotOf(row: CheckoutRow): Record<string, unknown> {
  return {
    ...row,
    price_atomic: row.price_atomic.toString(),
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    armed_at: row.armed_at?.toISOString() ?? null,
    voided_at: row.voided_at?.toISOString() ?? null,
    expiry_recorded_at: row.expiry_recorded_at?.toISOString() ?? null,
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
    // Snapshots taken before void was a flag have neither field: the checkout as created was not void.
    voided_at: date(s.voided_at),
    expiry_recorded_at: date(s.expiry_recorded_at),
    // Snapshots taken before checkout settings existed: the defaults every checkout had then.
    parties: (s.parties as Parties | undefined) ?? null,
    platform_fee_bps: (s.platform_fee_bps as number | undefined) ?? 0,
    platform_fee_to: (s.platform_fee_to as string | null | undefined) ?? null,
    // Snapshots taken before platform fee rails existed: the cut's EVM wallet only.
    platform_fee_rails: (s.platform_fee_rails as Record<string, string> | undefined) ?? {},
    sold_by: (s.sold_by as string | null | undefined) ?? null,
    inherit_account_payouts: (s.inherit_account_payouts as boolean | undefined) ?? true,
    wallet_button: (s.wallet_button as boolean | undefined) ?? false,
    test_delivery_daily_cap: (s.test_delivery_daily_cap as number | undefined) ?? 25,
    // Snapshots taken before payout rails existed: no rail beyond pay_to.
    payout_rails: (s.payout_rails as Record<string, string> | undefined) ?? {},
    // Snapshots taken before relay checkouts existed: inline.
    origin_url: (s.origin_url as string | null | undefined) ?? null,
    origin_method: (s.origin_method as string | null | undefined) ?? null,
    origin_auth_type: (s.origin_auth_type as string | null | undefined) ?? null,
    origin_auth_header: (s.origin_auth_header as string | null | undefined) ?? null,
    origin_key_id: (s.origin_key_id as string | null | undefined) ?? null,
    origin_one_off: (s.origin_one_off as boolean | undefined) ?? false,
    mcp_tool: (s.mcp_tool as string | null | undefined) ?? null,
    // Snapshots taken before packages existed: no package.
    max_deliveries: (s.max_deliveries as number | null | undefined) ?? null,
    package_ttl_days: (s.package_ttl_days as number | null | undefined) ?? null,
    // Snapshots taken before gated content existed: not an article.
    content_json: (s.content_json as string | null | undefined) ?? null,
    // Snapshots taken before escrow checkouts existed: a plain checkout without a twin.
    escrow: (s.escrow as EscrowTerms | null | undefined) ?? null,
    escrow_twin_id: (s.escrow_twin_id as string | null | undefined) ?? null,
    // Snapshots taken before series existed: not a series.
    schedule: (s.schedule as ScheduleTerms | null | undefined) ?? null,
  };
}
