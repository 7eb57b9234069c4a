import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { actorOfRequest } from "@c402/account-events";
import type { catalogReportsV1, catalogV1 } from "@c402/contracts";
import { invalid } from "@c402/problems";
import type { ServiceImplementation } from "@c402/rpc";
import type { Reports } from "../domain/reports";
import type { ReportPage, ReportPayment, ReportRow } from "../store/report-store";

/** The CatalogService methods about reports (the rest are in catalog-rpc.ts). */
export type ReportMethod = "fileReport" | "listReports" | "updateReport";

function paymentMessage(p: ReportPayment): catalogReportsV1.ReportPayment {
  return {
    $typeName: "catalog.v1.ReportPayment",
    paymentId: p.payment_id,
    amountUsd: p.amount_usd,
    total: BigInt(p.total),
    network: p.network,
    payer: p.payer,
    subject: p.subject,
    txHash: p.tx_hash,
    testMode: p.test_mode,
    ...(p.settled_at !== null ? { settledAt: timestampFromDate(new Date(p.settled_at)) } : {}),
    deliveryOutcome: p.delivery_outcome,
  };
}

function paymentOf(m: catalogReportsV1.ReportPayment): ReportPayment {
  return {
    payment_id: m.paymentId,
    amount_usd: m.amountUsd,
    total: m.total.toString(),
    network: m.network,
    payer: m.payer,
    subject: m.subject,
    tx_hash: m.txHash,
    test_mode: m.testMode,
    settled_at: m.settledAt ? timestampDate(m.settledAt).toISOString() : null,
    delivery_outcome: m.deliveryOutcome,
  };
}

export function reportMessage(r: ReportRow): catalogReportsV1.Report {
  return {
    $typeName: "catalog.v1.Report",
    id: r.id,
    checkoutId: r.checkout_id,
    accountId: r.account_id,
    category: r.category,
    ...(r.detail !== null ? { detail: r.detail } : {}),
    kind: r.kind,
    status: r.status,
    ...(r.note !== null ? { note: r.note } : {}),
    ...(r.payment !== null ? { payment: paymentMessage(r.payment) } : {}),
    testMode: r.test_mode,
    createdAt: timestampFromDate(r.created_at),
    updatedAt: timestampFromDate(r.updated_at),
    ...(r.acknowledged_at ? { acknowledgedAt: timestampFromDate(r.acknowledged_at) } : {}),
    ...(r.resolved_at ? { resolvedAt: timestampFromDate(r.resolved_at) } : {}),
  };
}

function pageOf(req: catalogReportsV1.ListReportsRequest): ReportPage {
  if (!req.after) return { size: req.pageSize };
  if (!req.after.createdAt || !req.after.id) throw invalid([{ field: "after", reason: "needs created_at and id" }]);
  return { size: req.pageSize, after: { createdAt: timestampDate(req.after.createdAt), id: req.after.id } };
}

export function reportRpc(reports: Reports): Pick<ServiceImplementation<typeof catalogV1.CatalogService>, ReportMethod> {
  return {
    async fileReport(req) {
      const report = await reports.file({
        checkoutId: req.checkoutId,
        category: req.category,
        ...(req.detail !== undefined ? { detail: req.detail } : {}),
        ...(req.payment ? { payment: paymentOf(req.payment) } : {}),
      });
      return { report: reportMessage(report) };
    },
    async listReports(req) {
      const rows = await reports.list(req.accountId, req.checkoutId, pageOf(req));
      return { reports: rows.map(reportMessage) };
    },
    async updateReport(req) {
      const report = await reports.update(
        req.accountId,
        req.reportId,
        { status: req.status, ...(req.note !== undefined ? { note: req.note } : {}) },
        actorOfRequest(req.actor),
      );
      return { report: reportMessage(report) };
    },
  };
}
