import { HANDOFF_NONCE } from "@c402/ids";
import { invalid } from "@c402/problems";
import { Router } from "express";
import { handoffView } from "../../views/payments";
import type { GatewayDeps } from "../deps";
import { checkoutIdOf } from "../face-requests";

/**
 * GET /c/{id}/handoff/{nonce}: a page that showed a QR (or handed the
 * purchase to another device) polls here for the payment that carried its
 * nonce.
 */
export function handoffRoutes({ clients, settings }: GatewayDeps): Router {
  const router = Router();

  router.get("/c/:id/handoff/:nonce", async (req, res) => {
    const id = checkoutIdOf(req);
    const nonce = String(req.params.nonce);
    res.setHeader("Cache-Control", "no-store");
    if (!HANDOFF_NONCE.test(nonce)) throw invalid([{ field: "nonce", reason: `must match ${HANDOFF_NONCE.source}` }]);
    res.json(handoffView(await clients.payments.findHandoff({ checkoutId: id, handoffId: nonce }), settings.baseUrl));
  });

  return router;
}
