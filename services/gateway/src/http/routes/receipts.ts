import { allowFraming, type EmbedOrigins } from "../embed-origins";
import { isId } from "@c402/ids";
import { ProblemError } from "@c402/problems";
import { Router, type Request } from "express";
import { receiptHtml } from "../../views/receipt-page";
import { pendingReceiptView, receiptUrl, receiptView } from "../../views/receipts";
import type { GatewayDeps } from "../deps";
import { wantsHtml } from "../face-requests";

/** GET /r/{id} (JSON, or the page for a browser), /r/{id}/download (the page as a file) and /r/by-tx/{hash}. */
export function receiptRoutes({ clients, settings }: GatewayDeps, embedOrigins: EmbedOrigins): Router {
  const router = Router();

  async function receiptOf(req: Request) {
    const id = String(req.params.paymentId);
    if (!isId("payment", id)) throw new ProblemError("not-found", "No such receipt.");
    return { id, ...(await clients.payments.getReceipt({ paymentId: id })) };
  }

  // View-only: from a transaction hash to its receipt.
  router.get("/r/by-tx/:txHash", async (req, res) => {
    const r = await clients.payments.findReceiptByTx({ txHash: String(req.params.txHash) });
    res.redirect(303, receiptUrl(settings.baseUrl, r.paymentId));
  });

  router.get("/r/:paymentId", async (req, res) => {
    const r = await receiptOf(req);
    if (!r.receipt) {
      res.status(202).json(pendingReceiptView(r.id, r.txHash));
      return;
    }
    const view = receiptView(r.receipt, settings.baseUrl);
    if (wantsHtml(req)) {
      allowFraming(res, await embedOrigins.of(r.receipt.accountId));
      res.type("html").send(receiptHtml(view));
      return;
    }
    res.json(view);
  });

  router.get("/r/:paymentId/download", async (req, res) => {
    const r = await receiptOf(req);
    if (!r.receipt) throw new ProblemError("not-found", "The receipt exists once the payment settles.");
    res.setHeader("Content-Disposition", `attachment; filename="receipt-${r.id}.html"`);
    res.type("html").send(receiptHtml(receiptView(r.receipt, settings.baseUrl)));
  });

  return router;
}
