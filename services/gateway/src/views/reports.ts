import type { catalogReportsV1 } from "@c402/contracts";
import { receiptUrl } from "./receipts";
import { isoOrNull } from "./values";

/** The public JSON shapes of reports: the buyer's confirmation, and the seller's record. */

/** What the buyer is told happens next: who sees the report, what the seller can do, and that it moves no money. */
export const REPORT_NEXT =
  "The seller is told: the report is on their reports list (and a checkout.reported event goes out), and they can acknowledge or resolve it; the operators see it too. A report never refunds a payment: for money, contact the seller.";

/** POST /v1/checkouts/{id}/reports (201): the confirmation, without anything of the seller's or of the payment. */
export function filedReportView(r: catalogReportsV1.Report) {
  return {
    id: r.id,
    object: "report",
    checkout_id: r.checkoutId,
    category: r.category,
    kind: r.kind,
    receipt_id: r.payment?.paymentId ?? null,
    status: r.status,
    created_at: isoOrNull(r.createdAt),
    refunds: false,
    next: REPORT_NEXT,
  };
}

/** The payment a buyer report is attached to, as its receipt showed it. */
function paymentView(p: catalogReportsV1.ReportPayment, baseUrl: string) {
  return {
    id: p.paymentId,
    amount_usd: p.amountUsd,
    total: Number(p.total),
    network: p.network,
    payer: p.payer,
    subject: p.subject,
    tx_hash: p.txHash,
    test_mode: p.testMode,
    settled_at: isoOrNull(p.settledAt),
    delivery: { outcome: p.deliveryOutcome },
    receipt_url: receiptUrl(baseUrl, p.paymentId),
  };
}

/** A report as the seller reads it (lists, PATCH). */
export function reportView(r: catalogReportsV1.Report, baseUrl: string) {
  return {
    id: r.id,
    object: "report",
    checkout_id: r.checkoutId,
    category: r.category,
    detail: r.detail ?? null,
    kind: r.kind,
    status: r.status,
    note: r.note ?? null,
    payment: r.payment ? paymentView(r.payment, baseUrl) : null,
    test_mode: r.testMode,
    created_at: isoOrNull(r.createdAt),
    updated_at: isoOrNull(r.updatedAt),
    acknowledged_at: isoOrNull(r.acknowledgedAt),
    resolved_at: isoOrNull(r.resolvedAt),
  };
}
