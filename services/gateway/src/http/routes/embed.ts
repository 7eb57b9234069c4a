import { Router } from "express";
import type { EmbedOperations } from "../../operations/embed";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";

/** GET and PUT /v1/account/embed: the origins allowed to frame the account's pay pages and receipts. */
export function embedRoutes({ clients }: GatewayDeps, embeds: EmbedOperations): Router {
  const router = Router();
  router.get("/v1/account/embed", requireScope(clients, "read_only"), async (req, res) => {
    res.json(await embeds.get(credentialOf(req)));
  });
  router.put("/v1/account/embed", requireScope(clients, "full"), async (req, res) => {
    res.json(await embeds.put(credentialOf(req), req.body));
  });
  return router;
}
