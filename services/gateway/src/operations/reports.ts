import type { MessageInitShape } from "@bufbuild/protobuf";
import type { catalogReportsV1 } from "@c402/contracts";
import { isCheckoutId } from "@c402/ids";
import { invalid, ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import type { Request, Response } from "express";
import type { GatewayDeps, ServiceClients } from "../http/deps";
import { ReportLimits, type ReportLimitSettings } from "../http/report-limits";
import { validateBody } from "../http/validate";
import { filedReportView } from "../views/reports";

/**
 * Filing a report on a checkout (POST /v1/checkouts/{id}/reports, and the MCP
 * tool report_checkout): anyone may, with no credential; a receipt (or a
 * package key) names the purchase. Rate limited per client address, and per
 * receipt or per address and checkout (report-limits.ts). A report never
 * moves money.
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

export class ReportFiling {
  private readonly limits: ReportLimits;

  constructor(
    private readonly deps: Pick<GatewayDeps, "clients" | "cache">,
    limitSettings?: ReportLimitSettings,
  ) {
    this.limits = new ReportLimits(deps.cache, limitSettings);
  }

  /** Files one report; `req` and `res` are the HTTP request it came in (its client address is counted, the limit headers set). */
  async file(req: Request, res: Response, checkoutId: string, raw: unknown, packageKey?: string) {
    const { clients } = this.deps;
    if (!isCheckoutId(checkoutId)) throw new ProblemError("not-found", "No such checkout.");
    const body = validateBody("ReportCreate", raw);
    // A package key (Authorization: Bearer pk_…) names its purchase as receipt_id does; a key not of this checkout is 401.
    const key = body.receipt_id === undefined ? packageKey : undefined;
    const receiptId =
      key === undefined
        ? body.receipt_id
        : answered((await clients.fulfillment.packageUsage({ checkoutId, packageKey: key, pageSize: 1 })).package, "package").paymentId;
    await this.limits.admit(req, res, { checkoutId, receiptId });
    const payment = receiptId === undefined ? undefined : await paymentOfReceipt(clients, checkoutId, receiptId);
    const r = await clients.catalog.fileReport({
      checkoutId,
      category: body.category,
      ...(body.detail !== undefined ? { detail: body.detail } : {}),
      ...(payment ? { payment } : {}),
    });
    return filedReportView(answered(r.report, "report"));
  }
}
