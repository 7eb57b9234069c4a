import { isId } from "@c402/ids";
import { invalid, ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { Router } from "express";
import { escrowStatusView } from "../../views/escrows";
import type { GatewayDeps } from "../deps";
import { escrowCheckoutIdOf } from "../face-requests";

/**
 * GET /e/{id}/status?payment_id=: a buyer's escrow as the escrow service
 * knows it (its state follows the chain), with the sentence on what happens
 * next. An escrow of another checkout is 404, as an unknown one.
 */
export function escrowStatusRoutes({ clients, settings }: GatewayDeps): Router {
  const router = Router();
  router.get("/e/:id/status", async (req, res) => {
    const id = escrowCheckoutIdOf(req);
    const paymentId = req.query.payment_id;
    res.setHeader("Cache-Control", "no-store");
    if (typeof paymentId !== "string" || !isId("payment", paymentId))
      throw invalid([{ field: "payment_id", reason: "must be the escrow's payment id (pay_…)" }]);
    const escrow = answered((await clients.escrow.getEscrow({ paymentId })).escrow, "escrow");
    if (escrow.checkoutId !== id) throw new ProblemError("not-found", "No escrow of this checkout has this payment id.");
    res.json(escrowStatusView(escrow, settings.baseUrl));
  });
  return router;
}
