import { Router } from "express";
import type { EscrowOperations } from "../../operations/escrows";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { escrowCheckoutIdOf } from "../face-requests";

/**
 * Escrows after the deposit (the escrow service owns them):
 *
 *   GET  /v1/escrows                                   seller (read_only): the account's escrows, `status` held | on_hold | escalated
 *   GET  /v1/escrows/{payment_id}                      seller (read_only): one escrow
 *   POST /v1/escrows/{payment_id}/resolve?to_seller=   seller (payments): the arbiter's unsigned ruling
 *   POST /v1/escrows/{payment_id}/resolve/submit       seller (payments): Solana only (409 here: no Solana escrow rail)
 *   GET  /e/{id}/status?payment_id=                    none: the escrow's state and what happens next
 *   POST /e/{id}/actions/{action}?payment_id=          none: the typed data to sign (hold, approve, request-refund; the seller's cancel)
 *   POST /e/{id}/actions/{action}/submit?payment_id=   none: relay the signature on the service's gas
 *
 * Buyer-side routes need no credential: the contract authorizes the signing wallet.
 */
export function escrowRoutes({ clients }: GatewayDeps, escrows: EscrowOperations): Router {
  const router = Router();
  router.get("/v1/escrows", requireScope(clients, "read_only"), async (req, res) => {
    res.json(await escrows.list(credentialOf(req), req.query));
  });
  router.get("/v1/escrows/:paymentId", requireScope(clients, "read_only"), async (req, res) => {
    res.json(await escrows.get(credentialOf(req), String(req.params.paymentId)));
  });
  router.post("/v1/escrows/:paymentId/resolve", requireScope(clients, "payments"), async (req, res) => {
    res.json(await escrows.resolve(credentialOf(req), String(req.params.paymentId), req.query.to_seller));
  });
  router.post("/v1/escrows/:paymentId/resolve/submit", requireScope(clients, "payments"), async (req, res) => {
    res.json(await escrows.resolveSubmit(credentialOf(req), String(req.params.paymentId), req.query.to_seller));
  });
  router.get("/e/:id/status", async (req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.json(await escrows.status(escrowCheckoutIdOf(req), req.query.payment_id));
  });
  router.post("/e/:id/actions/:action", async (req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.json(await escrows.prepareAction(escrowCheckoutIdOf(req), String(req.params.action), req.query.payment_id));
  });
  router.post("/e/:id/actions/:action/submit", async (req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.json(await escrows.submitAction(escrowCheckoutIdOf(req), String(req.params.action), req.query.payment_id, req.body));
  });
  return router;
}
