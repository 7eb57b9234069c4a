import type { MessageInitShape } from "@bufbuild/protobuf";
import type { catalogReportsV1 } from "@c402/contracts";
import { isId } from "@c402/ids";
import { ProblemError, invalid } from "@c402/problems";
import { answered } from "@c402/rpc";
import { Router, type Request, type Response } from "express";
import { filedReportView, reportView } from "../../views/reports";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps, ServiceClients } from "../deps";
import { createdAtKey, pageOf, pageRequestOf, servicePage } from "../pagination";
import { ReportLimits, type ReportLimitSettings } from "../report-limits";
import { validateBody } from "../validate";
import { packageKeyOf } from "../face-requests";

/**
 * Reports on checkouts (catalog owns them):
 *
 *   POST  /v1/checkouts/{id}/reports   anyone (no credential; a package key names its purchase): file a report
 *   GET   /v1/checkouts/{id}/reports   seller (read_only): one checkout's reports
 *   GET   /v1/reports                  seller (read_only): every report on the account's checkouts
 *   PATCH /v1/reports/{id}             seller (payments): acknowledge or resolve
 *
 * There is no DELETE (the router answers 405). A report never moves money.
 */

const NOT_THIS_CHECKOUTS = "is not a receipt of this checkout";

/**
 * The payment a report names, from its receipt (payments is the authority).
 * A receipt that does not exist, is not settled, or belongs to another
 * checkout is refused alike (422 naming receipt_id), so the answer never
 * tells whether a receipt exists elsewhere; the checkout itself is looked up
 * first in that case, so an unknown checkout is still 404.
 */
async function paymentOfReceipt(
  clients: ServiceClients,
  checkoutId: string,
  receiptId: string,
): Promise<MessageInitShape<typeof catalogReportsV1.ReportPaymentSchema>> {
  let receipt;
  try {
    receipt = (await clients.payments.getReceipt({ paymentId: receiptId })).receipt;
  } catch (err) {
    if (!(err instanceof ProblemError && err.slug === "not-found")) throw err;
  }
  if (!receipt || receipt.checkoutId !== checkoutId) {
    await clients.catalog.getCheckout({ checkoutId });
    throw invalid([{ field: "receipt_id", reason: NOT_THIS_CHECKOUTS }], "The receipt named is not one of this checkout's.");
  }
  return {
    paymentId: receipt.id,
    amountUsd: receipt.amountUsd,
    total: receipt.total,
    network: receipt.network,
    payer: receipt.payer,
    subject: receipt.subject,
    txHash: receipt.txHash,
    testMode: receipt.testMode,
    ...(receipt.settledAt ? { settledAt: receipt.settledAt } : {}),
    deliveryOutcome: receipt.deliveryOutcome,
  };
}

export function reportRoutes({ clients, cache, settings }: GatewayDeps, limitSettings?: ReportLimitSettings): Router {
  const router = Router();
  const limits = new ReportLimits(cache, limitSettings);

  router.post("/v1/checkouts/:id/reports", async (req, res) => {
    const checkoutId = String(req.params.id);
    if (!isId("checkout", checkoutId)) throw new ProblemError("not-found", "No such checkout.");
    const body = validateBody("ReportCreate", req.body);
    // A package key (Authorization: Bearer pk_…) names its purchase as receipt_id does; a key not of this checkout is 401.
    const packageKey = body.receipt_id === undefined ? packageKeyOf(req) : undefined;
    const receiptId =
      packageKey === undefined
        ? body.receipt_id
        : answered((await clients.fulfillment.packageUsage({ checkoutId, packageKey, pageSize: 1 })).package, "package").paymentId;
    await limits.admit(req, res, { checkoutId, receiptId });
    const payment = receiptId === undefined ? undefined : await paymentOfReceipt(clients, checkoutId, receiptId);
    const r = await clients.catalog.fileReport({
      checkoutId,
      category: body.category,
      ...(body.detail !== undefined ? { detail: body.detail } : {}),
      ...(payment ? { payment } : {}),
    });
    res.status(201).json(filedReportView(answered(r.report, "report")));
  });

  /** One page of the account's reports, of one checkout when the path names it. */
  const listed = async (req: Request, res: Response) => {
    const page = pageRequestOf(req.query);
    const r = await clients.catalog.listReports({
      accountId: credentialOf(req).accountId,
      ...(req.params.id !== undefined ? { checkoutId: String(req.params.id) } : {}),
      ...servicePage(page),
    });
    const { items, ...more } = pageOf(r.reports, page.limit, createdAtKey);
    res.json({ reports: items.map((x) => reportView(x, settings.baseUrl)), ...more });
  };
  router.get("/v1/reports", requireScope(clients, "read_only"), listed);
  router.get("/v1/checkouts/:id/reports", requireScope(clients, "read_only"), listed);

  router.patch("/v1/reports/:id", requireScope(clients, "payments"), async (req, res) => {
    const body = validateBody("ReportUpdate", req.body);
    const cred = credentialOf(req);
    const r = await clients.catalog.updateReport({
      accountId: cred.accountId,
      actor: cred.actor,
      reportId: String(req.params.id),
      status: body.status,
      ...(body.note !== undefined ? { note: body.note } : {}),
    });
    res.json(reportView(answered(r.report, "report"), settings.baseUrl));
  });

  return router;
}
