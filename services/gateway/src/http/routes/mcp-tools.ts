import { Router } from "express";
import { mcpToolsView } from "../../views/mcp-tools";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { originAuthOf } from "../origin-auth";
import { noStore } from "../request-context";
import { validateBody } from "../validate";

/** POST /v1/mcp/tools: what a seller's MCP server offers, asked by fulfillment through the outbound guard; nothing is stored. */
export function mcpToolRoutes({ clients }: GatewayDeps): Router {
  const router = Router();
  router.post("/v1/mcp/tools", requireScope(clients, "payments"), noStore, async (req, res) => {
    const body = validateBody("McpToolsRequest", req.body);
    const auth = originAuthOf(body);
    const r = await clients.fulfillment.listMcpTools({ accountId: credentialOf(req).accountId, originUrl: body.origin_url, ...(auth ? { auth } : {}) });
    res.json(mcpToolsView(r));
  });
  return router;
}
