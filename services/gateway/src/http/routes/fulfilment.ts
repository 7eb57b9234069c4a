import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { answered } from "@c402/rpc";
import { Router } from "express";
import { receiptView } from "../../views/receipts";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { pageOf, pageRequestOf } from "../pagination";

/**
 * Webhook sales (fulfillment `webhook`): the seller is told of each sale
 * (checkout.paid) and fulfils it; these list the ones still open and close
 * one out.
 */
export function fulfilmentRoutes({ clients, settings }: GatewayDeps): Router {
  const router = Router();

  router.get("/v1/receipts/awaiting-fulfilment", requireScope(clients, "read_only"), async (req, res) => {
    const page = pageRequestOf(req.query);
    const r = await clients.payments.listAwaitingFulfilment({
      accountId: credentialOf(req).accountId,
      pageSize: page.limit + 1,
      ...(page.after ? { afterSettledAt: timestampFromDate(page.after.createdAt), afterId: page.after.id } : {}),
    });
    const { items, ...more } = pageOf(r.receipts, page.limit, (receipt) => ({
      createdAt: timestampDate(answered(receipt.settledAt, "settled_at")),
      id: receipt.id,
    }));
    res.json({ receipts: items.map((receipt) => receiptView(receipt, settings.baseUrl)), ...more });
  });

  router.post("/v1/receipts/:id/fulfilled", requireScope(clients, "payments"), async (req, res) => {
    const cred = credentialOf(req);
    const r = await clients.payments.markFulfilled({ accountId: cred.accountId, paymentId: String(req.params.id), actor: cred.actor });
    res.json({ ...receiptView(answered(r.receipt, "receipt"), settings.baseUrl), already_fulfilled: r.alreadyFulfilled });
  });

  return router;
}
