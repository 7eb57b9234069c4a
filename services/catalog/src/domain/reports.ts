import type { Actor } from "@c402/account-events";
import { enqueueOutboxRow } from "@c402/bus";
import { isId, newId, isCheckoutId } from "@c402/ids";
import { ProblemError, invalid } from "@c402/problems";
import { checkoutReportedRow, reportActivity } from "../events/report-events";
import { catalogStore, type CatalogDb } from "../store/catalog-store";
import { reportStore, type ReportPage, type ReportPayment, type ReportRow, type ReportsDb } from "../store/report-store";
import { assertTransition, validateFile, validateUpdate, type FileInput, type UpdateInput } from "./report-rules";

/** The most reports one list call answers, whoever asks (the gateway asks at most 201). */
export const REPORT_PAGE_SIZE_MAX = 1000;

export interface FileReportRequest extends FileInput {
  checkoutId: string;
  /** The receipt the buyer named, already checked (by the gateway, with payments) to be one of this checkout's. */
  payment?: ReportPayment | undefined;
}

export interface ReportsOptions {
  db: ReportsDb;
  now?: () => Date;
  /** Called after a commit that wrote an outbox event (pokes the relay). */
  onCommitted?: () => void;
}

const notFound = () => new ProblemError("not-found", "No such report.");
const noCheckout = () => new ProblemError("not-found", "No such checkout.");

/**
 * Reports on checkouts: anyone files one (no account), the checkout's seller
 * lists them and acknowledges or resolves them. Filing commits the report,
 * its `checkout.reported` event and its `report.filed` account event in one
 * transaction; a change commits with its `report.updated` account event. A
 * report never moves money.
 */
export class Reports {
  private readonly db: ReportsDb;
  private readonly now: () => Date;
  private readonly onCommitted: () => void;

  constructor(options: ReportsOptions) {
    this.db = options.db;
    this.now = options.now ?? (() => new Date());
    this.onCommitted = options.onCommitted ?? (() => {});
  }

  /** Files a report on any existing checkout (void and expired ones included); 404 for an unknown checkout. */
  async file(req: FileReportRequest): Promise<ReportRow> {
    const valid = validateFile(req);
    if (!isCheckoutId(req.checkoutId)) throw noCheckout();
    const now = this.now();
    const report = await this.db.transaction().execute(async (trx) => {
      const checkout = await catalogStore.findCheckout(trx as unknown as CatalogDb, req.checkoutId);
      if (!checkout) throw noCheckout();
      const payment = req.payment ?? null;
      const row: ReportRow = {
        id: newId("report"),
        account_id: checkout.account_id,
        checkout_id: checkout.id,
        category: valid.category,
        detail: valid.detail,
        kind: payment ? "buyer" : "anonymous",
        status: "open",
        note: null,
        payment_id: payment?.payment_id ?? null,
        payment,
        // A rehearsal payment is rehearsal; without one, what the checkout was doing when reported.
        test_mode: payment ? payment.test_mode : !checkout.armed,
        created_at: now,
        updated_at: now,
        acknowledged_at: null,
        resolved_at: null,
      };
      await reportStore.insert(trx, row);
      await enqueueOutboxRow(trx, checkoutReportedRow(row));
      await enqueueOutboxRow(
        trx,
        reportActivity(row, {
          action: "report.filed",
          actor: "system",
          at: now,
          detail: { checkout_id: row.checkout_id, category: row.category, kind: row.kind, receipt_id: row.payment_id },
        }),
      );
      return row;
    });
    this.onCommitted();
    return report;
  }

  /** One page of the account's reports, newest first, or of one of its checkouts (404 when the checkout is not the account's). */
  async list(accountId: string, checkoutId: string | undefined, page: ReportPage): Promise<ReportRow[]> {
    if (!Number.isInteger(page.size) || page.size < 1 || page.size > REPORT_PAGE_SIZE_MAX) {
      throw invalid([{ field: "page_size", reason: `must be from 1 to ${REPORT_PAGE_SIZE_MAX}` }]);
    }
    if (checkoutId !== undefined) {
      const checkout = isCheckoutId(checkoutId) ? await catalogStore.findCheckout(this.db as unknown as CatalogDb, checkoutId) : undefined;
      if (!checkout || checkout.account_id !== accountId) throw noCheckout();
    }
    return reportStore.list(this.db, accountId, checkoutId, page);
  }

  /**
   * Acknowledges or resolves a report of the account's checkouts, on the
   * locked row: open → acknowledged → resolved, or open → resolved; anything
   * else is 409. A note replaces the previous one; acknowledging without a
   * note keeps it.
   */
  async update(accountId: string, reportId: string, input: UpdateInput, actor: Actor): Promise<ReportRow> {
    const valid = validateUpdate(input);
    if (!isId("report", reportId)) throw notFound();
    const now = this.now();
    const updated = await this.db.transaction().execute(async (trx) => {
      const current = await reportStore.lock(trx, reportId);
      if (!current || current.account_id !== accountId) throw notFound();
      assertTransition(current.status, valid.status);
      const changed = await reportStore.update(trx, reportId, {
        status: valid.status,
        ...(valid.note !== null ? { note: valid.note } : {}),
        updated_at: now,
        ...(valid.status === "acknowledged" ? { acknowledged_at: now } : { resolved_at: now }),
      });
      await enqueueOutboxRow(
        trx,
        reportActivity(changed, {
          action: "report.updated",
          actor,
          at: now,
          detail: { checkout_id: changed.checkout_id, status: changed.status, was: current.status, with_note: valid.note !== null },
        }),
      );
      return changed;
    });
    this.onCommitted();
    return updated;
  }
}
