import { Router } from "express";
import type { EscrowSettingsOperations } from "../../operations/escrow-settings";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";

/** GET and PUT /v1/account/escrow, GET /v1/account/escrow/readiness: the account's escrow settings (the escrow service's). */
export function escrowSettingsRoutes({ clients }: GatewayDeps, escrow: EscrowSettingsOperations): Router {
  const router = Router();
  router.get("/v1/account/escrow", requireScope(clients, "read_only"), async (req, res) => {
    res.json(await escrow.get(credentialOf(req)));
  });
  router.put("/v1/account/escrow", requireScope(clients, "full"), async (req, res) => {
    res.json(await escrow.put(credentialOf(req), req.body));
  });
  router.get("/v1/account/escrow/readiness", requireScope(clients, "read_only"), async (req, res) => {
    res.json(await escrow.readiness(credentialOf(req)));
  });
  return router;
}
