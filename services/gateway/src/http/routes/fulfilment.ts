import { Router } from "express";
import { ReceiptOperations } from "../../operations/receipts";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";

/**
 * Webhook sales (fulfillment `webhook`): the seller is told of each sale
 * (checkout.paid) and fulfils it; these list the ones still open and close
 * one out.
 */
export function fulfilmentRoutes(deps: GatewayDeps, receipts = new ReceiptOperations(deps)): Router {
  const router = Router();

  router.get("/v1/receipts/awaiting-fulfilment", requireScope(deps.clients, "read_only"), async (req, res) => {
    res.json(await receipts.awaitingFulfilment(credentialOf(req), req.query));
  });

  router.post("/v1/receipts/:id/fulfilled", requireScope(deps.clients, "payments"), async (req, res) => {
    res.json(await receipts.markFulfilled(credentialOf(req), String(req.params.id)));
  });

  return router;
}
