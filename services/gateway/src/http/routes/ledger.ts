import { once } from "node:events";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { paymentsV1 } from "@c402/contracts";
import { invalid, ProblemError, type FieldError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { Router, type Request, type Response } from "express";
import { pendingReceiptView, receiptView } from "../../views/receipts";
import { csvLine, RECEIPT_CSV_COLUMNS, receiptCsvLine } from "../../views/receipts-csv";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { pageOf, pageRequestOf, type PageAfter } from "../pagination";

/**
 * The receipts ledger of the seller (docs/decisions.md "Receipts ledger"):
 * GET /v1/receipts (one page, newest first), GET /v1/receipts/export (all of
 * it as CSV, streamed a page at a time) and GET /v1/receipts/{id} (one of the
 * account's). Both lists take the same filters: `test_mode` (true: the
 * rehearsal ledger; default real payments only), `sold_by`, and `from`/`to`
 * (ISO 8601; settled at or after `from`, before `to`).
 */

/** Rows the export asks payments for at a time: memory stays this bounded at any ledger size. */
export const EXPORT_PAGE = 1000;

type LedgerFilter = Pick<paymentsV1.ListReceiptsRequest, "testMode" | "soldBy" | "settledFrom" | "settledTo">;

function ledgerFilterOf(query: Record<string, unknown>): LedgerFilter {
  const errors: FieldError[] = [];
  const text = (name: string): string | undefined => {
    const v = query[name];
    if (v === undefined) return undefined;
    if (typeof v !== "string") errors.push({ field: name, reason: "must be given once" });
    return typeof v === "string" ? v : undefined;
  };
  const mode = text("test_mode");
  if (mode !== undefined && mode !== "true" && mode !== "false") errors.push({ field: "test_mode", reason: "must be true or false" });
  const soldBy = text("sold_by");
  if (soldBy !== undefined && (soldBy.length < 1 || soldBy.length > 200)) errors.push({ field: "sold_by", reason: "must be 1 to 200 characters" });
  const time = (name: string): Date | undefined => {
    const v = text(name);
    if (v === undefined) return undefined;
    const at = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(v) ? new Date(v) : new Date(NaN);
    if (Number.isNaN(at.getTime())) errors.push({ field: name, reason: "must be an ISO 8601 date or date-time" });
    return Number.isNaN(at.getTime()) ? undefined : at;
  };
  const from = time("from");
  const to = time("to");
  if (from && to && from.getTime() >= to.getTime()) errors.push({ field: "to", reason: "must be after from" });
  if (errors.length) throw invalid(errors);
  return {
    testMode: mode === "true",
    ...(soldBy !== undefined ? { soldBy } : {}),
    ...(from ? { settledFrom: timestampFromDate(from) } : {}),
    ...(to ? { settledTo: timestampFromDate(to) } : {}),
  };
}

const afterOf = (after: PageAfter | undefined) => (after ? { afterSettledAt: timestampFromDate(after.createdAt), afterId: after.id } : {});
const keyOf = (r: paymentsV1.Receipt): PageAfter => ({ createdAt: timestampDate(answered(r.settledAt, "settled_at")), id: r.id });

/** Writes and waits when the socket's buffer is full, so a slow reader holds the export back instead of memory growing. */
async function writeRespectingPressure(res: Response, chunk: string): Promise<void> {
  if (!res.write(chunk)) await once(res, "drain");
}

export function ledgerRoutes({ clients, settings }: GatewayDeps): Router {
  const router = Router();

  router.get("/v1/receipts", requireScope(clients, "read_only"), async (req, res) => {
    const page = pageRequestOf(req.query);
    const filter = ledgerFilterOf(req.query);
    const r = await clients.payments.listReceipts({ accountId: credentialOf(req).accountId, pageSize: page.limit + 1, ...filter, ...afterOf(page.after) });
    const { items, ...more } = pageOf(r.receipts, page.limit, keyOf);
    res.json({ receipts: items.map((receipt) => receiptView(receipt, settings.baseUrl)), ...more });
  });

  router.get("/v1/receipts/export", requireScope(clients, "read_only"), async (req: Request, res: Response) => {
    const filter = ledgerFilterOf(req.query);
    const accountId = credentialOf(req).accountId;
    const ask = (after: PageAfter | undefined) => clients.payments.listReceipts({ accountId, pageSize: EXPORT_PAGE, ...filter, ...afterOf(after) });
    // The first page is asked before anything is sent, so a failure still answers a problem document.
    let page = await ask(undefined);
    res.setHeader("Content-Type", "text/csv; charset=utf-8; header=present");
    res.setHeader("Content-Disposition", `attachment; filename="receipts${filter.testMode ? "-test" : ""}.csv"`);
    res.setHeader("Cache-Control", "no-store");
    await writeRespectingPressure(res, csvLine([...RECEIPT_CSV_COLUMNS]));
    for (;;) {
      for (const receipt of page.receipts) await writeRespectingPressure(res, receiptCsvLine(receipt));
      const last = page.receipts.at(-1);
      if (page.receipts.length < EXPORT_PAGE || !last) break;
      page = await ask(keyOf(last));
    }
    res.end();
  });

  router.get("/v1/receipts/:id", requireScope(clients, "read_only"), async (req, res) => {
    const r = await clients.payments.getReceipt({ paymentId: String(req.params.id) });
    const accountId = credentialOf(req).accountId;
    // Another account's receipt is answered as no receipt at all.
    if (r.receipt && r.receipt.accountId !== accountId) throw new ProblemError("not-found", "No such receipt.");
    if (!r.receipt) {
      res.status(202).json(pendingReceiptView(String(req.params.id), r.txHash));
      return;
    }
    res.json(receiptView(r.receipt, settings.baseUrl));
  });

  return router;
}
