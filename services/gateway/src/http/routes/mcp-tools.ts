import { Router } from "express";
import { listMcpTools } from "../../operations/mcp-servers";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { noStore } from "../request-context";

/** POST /v1/mcp/tools: what a seller's MCP server offers, asked by fulfillment through the outbound guard; nothing is stored. */
export function mcpToolRoutes(deps: GatewayDeps): Router {
  const router = Router();
  router.post("/v1/mcp/tools", requireScope(deps.clients, "payments"), noStore, async (req, res) => {
    res.json(await listMcpTools(deps, credentialOf(req), req.body));
  });
  return router;
}
