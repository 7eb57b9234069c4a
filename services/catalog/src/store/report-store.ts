import type { Kysely, Selectable } from "kysely";
import type { ReportCategory, ReportKind, ReportStatus } from "@c402/contracts";
import type { CatalogTables } from "./catalog-store";

/**
 * The payment a buyer report names, as its receipt showed it when the report
 * was filed (receipts never change). Amounts as decimal text, times as ISO.
 */
export interface ReportPayment {
  payment_id: string;
  amount_usd: string;
  /** What the buyer paid, fee included, in USDC atomic units. */
  total: string;
  network: string;
  payer: string;
  subject: string;
  tx_hash: string;
  test_mode: boolean;
  settled_at: string | null;
  delivery_outcome: string;
}

interface ReportsTable {
  id: string;
  account_id: string;
  checkout_id: string;
  category: ReportCategory;
  detail: string | null;
  kind: ReportKind;
  status: ReportStatus;
  note: string | null;
  payment_id: string | null;
  payment: ReportPayment | null;
  test_mode: boolean;
  created_at: Date;
  updated_at: Date;
  acknowledged_at: Date | null;
  resolved_at: Date | null;
}

export interface ReportTables extends CatalogTables {
  reports: ReportsTable;
}

export type ReportRow = Selectable<ReportsTable>;
export type ReportsDb = Kysely<ReportTables>;

/** One page of a newest-first list: at most `size` reports after `after` in (created_at, id) order. */
export interface ReportPage {
  size: number;
  after?: { createdAt: Date; id: string };
}

const asJson = (payment: ReportPayment | null) => (payment === null ? null : (JSON.stringify(payment) as unknown as ReportPayment));

export const reportStore = {
  insert: (db: ReportsDb, row: ReportRow) =>
    db
      .insertInto("reports")
      .values({ ...row, payment: asJson(row.payment) })
      .execute(),

  /** The report, locked for a change in the caller's transaction. */
  lock: (db: ReportsDb, id: string) => db.selectFrom("reports").selectAll().where("id", "=", id).forUpdate().executeTakeFirst(),

  update: (db: ReportsDb, id: string, set: Partial<Pick<ReportRow, "status" | "note" | "updated_at" | "acknowledged_at" | "resolved_at">>) =>
    db.updateTable("reports").set(set).where("id", "=", id).returningAll().executeTakeFirstOrThrow(),

  /**
   * A keyset page of the account's reports, newest first (index
   * reports_account_page), or of one checkout's (reports_checkout_page; the
   * account is checked as well, so a page never shows another seller's).
   */
  list: (db: ReportsDb, accountId: string, checkoutId: string | undefined, page: ReportPage): Promise<ReportRow[]> => {
    let q = db.selectFrom("reports").selectAll().where("account_id", "=", accountId);
    if (checkoutId !== undefined) q = q.where("checkout_id", "=", checkoutId);
    const after = page.after;
    if (after) q = q.where((eb) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)));
    return q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.size).execute();
  },
};
