import { MCP_TOOLS_LISTING_TIMEOUT_MS, ORIGIN_HOP_MARGIN_MS } from "@c402/contracts";
import { ensureScope, type Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import { originAuthOf } from "../http/origin-auth";
import { validateBody } from "../http/validate";
import { mcpToolsView } from "../views/mcp-tools";

/**
 * POST /v1/mcp/tools and the MCP tool list_mcp_tools: what a seller's own MCP
 * server offers (before creating an mcp checkout), asked by fulfillment
 * through the outbound guard; nothing is stored.
 */
export async function listMcpTools({ clients }: Pick<GatewayDeps, "clients">, cred: Credential, raw: unknown) {
  ensureScope(cred, "payments");
  const body = validateBody("McpToolsRequest", raw);
  const auth = originAuthOf(body);
  const r = await clients.fulfillment.listMcpTools(
    { accountId: cred.accountId, originUrl: body.origin_url, ...(auth ? { auth } : {}) },
    // Longer than the look at the server may take: its own timeout (a 502 naming it) is what the seller hears.
    { timeoutMs: MCP_TOOLS_LISTING_TIMEOUT_MS + ORIGIN_HOP_MARGIN_MS },
  );
  return mcpToolsView(r);
}
