import { Router } from "express";
import { sellerAnalytics } from "../../operations/analytics";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";

/** GET /v1/analytics: the seller's earnings, buyers, failed deliveries and liabilities over the last `days` UTC days. */
export function analyticsRoutes(deps: GatewayDeps): Router {
  const router = Router();
  router.get("/v1/analytics", requireScope(deps.clients, "read_only"), async (req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.json(await sellerAnalytics(deps, credentialOf(req), req.query));
  });
  return router;
}
