import { once } from "node:events";
import { Router, type Request, type Response } from "express";
import { afterOf, keyOf, ledgerFilterOf, ReceiptOperations } from "../../operations/receipts";
import { csvLine, RECEIPT_CSV_COLUMNS, receiptCsvLine } from "../../views/receipts-csv";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import type { PageAfter } from "../pagination";

/**
 * The receipts ledger of the seller (docs/decisions.md "Receipts ledger"):
 * GET /v1/receipts (one page, newest first), GET /v1/receipts/export (all of
 * it as CSV, streamed a page at a time) and GET /v1/receipts/{id} (one of the
 * account's), with the filters and operations of operations/receipts.ts.
 */

/** Rows the export asks payments for at a time: memory stays this bounded at any ledger size. */
export const EXPORT_PAGE = 1000;

/** Writes and waits when the socket's buffer is full, so a slow reader holds the export back instead of memory growing. */
async function writeRespectingPressure(res: Response, chunk: string): Promise<void> {
  if (!res.write(chunk)) await once(res, "drain");
}

export function ledgerRoutes(deps: GatewayDeps, receipts = new ReceiptOperations(deps)): Router {
  const { clients } = deps;
  const router = Router();

  router.get("/v1/receipts", requireScope(clients, "read_only"), async (req, res) => {
    res.json(await receipts.list(credentialOf(req), req.query));
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
    const r = await receipts.get(credentialOf(req), String(req.params.id));
    res.status(r.pending ? 202 : 200).json(r.receipt);
  });

  return router;
}
