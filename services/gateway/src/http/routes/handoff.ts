import { HANDOFF_NONCE } from "@c402/ids";
import { invalid } from "@c402/problems";
import { Router, type Request, type Response } from "express";
import { handoffView } from "../../views/payments";
import type { GatewayDeps } from "../deps";
import { checkoutIdOf, escrowCheckoutIdOf } from "../face-requests";

/**
 * GET /c/{id}/handoff/{nonce} (and /e/{id}/handoff/{nonce} for an escrow
 * checkout): a page that showed a QR (or handed the purchase to another
 * device) polls here for the payment that carried its nonce; an escrow sale
 * answers once held (escrow_state `held`).
 */
export function handoffRoutes({ clients, settings }: GatewayDeps): Router {
  const router = Router();

  const handoff = (idOf: (req: Request) => string) => async (req: Request, res: Response) => {
    const id = idOf(req);
    const nonce = String(req.params.nonce);
    res.setHeader("Cache-Control", "no-store");
    if (!HANDOFF_NONCE.test(nonce)) throw invalid([{ field: "nonce", reason: `must match ${HANDOFF_NONCE.source}` }]);
    res.json(handoffView(await clients.payments.findHandoff({ checkoutId: id, handoffId: nonce }), settings.baseUrl));
  };

  router.get("/c/:id/handoff/:nonce", handoff(checkoutIdOf));
  router.get("/e/:id/handoff/:nonce", handoff(escrowCheckoutIdOf));
  return router;
}
