import { MCP_TOOLS_LISTING_TIMEOUT_MS } from "@c402/contracts";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { NOT_CALLED_REASON, type GuardedFetch } from "@c402/outbound-http";
import { invalid, ProblemError } from "@c402/problems";
import { refusalIn, withMcpSession } from "./mcp-session";
import { resolveOriginAuth, type OriginAuthRequest } from "./origin-auth";
import type { OriginKeys } from "./origin-keys";
import { assertValid } from "./origin-key-rules";
import { originUrlErrors } from "./origin-url";

/** At most this many pages and tools are read from one server. */
const MAX_PAGES = 10;
const MAX_TOOLS = 1000;

export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: unknown;
}

/** An MCP server that could not be used, as the problem the caller gets: 422 when the URL may not be called, else 502. Never quotes what the server sent. */
export function mcpProblem(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  const refusal = refusalIn(err);
  if (refusal && (refusal.reason === "blocked-address" || refusal.reason === "bad-url")) {
    return invalid([{ field: "origin_url", reason: NOT_CALLED_REASON }]);
  }
  const why = refusal
    ? `could not be reached (${refusal.reason})`
    : err instanceof StreamableHTTPError
      ? typeof err.code === "number" && err.code >= 100
        ? `answered HTTP ${err.code}`
        : "answered with something other than MCP"
      : err instanceof McpError
        ? `refused the handshake (JSON-RPC error ${err.code})`
        : "could not be used";
  return new ProblemError("upstream-failed", {
    message: `The MCP server ${why}.`,
    help: { retry_is_safe: true, fix: "Check the URL, the server and its credential, then retry." },
  });
}

/**
 * Asks a seller's MCP server for its tools with the official SDK client:
 * initialize, then tools/list (following pages), every request through the
 * outbound guard with the credential's headers. Nothing is stored.
 */
export class McpTools {
  constructor(private readonly deps: { fetch: GuardedFetch; originKeys: OriginKeys }) {}

  async list(req: { accountId: string; originUrl: string; auth: OriginAuthRequest }): Promise<ListedTool[]> {
    assertValid(originUrlErrors(req.originUrl, "origin_url"));
    const credential = await resolveOriginAuth(req.auth, req.accountId, this.deps.originKeys);
    try {
      return await withMcpSession(this.deps.fetch, { originUrl: req.originUrl, credential, deadlineMs: MCP_TOOLS_LISTING_TIMEOUT_MS }, async (client, left) => {
        const tools: Tool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_PAGES && tools.length < MAX_TOOLS; page++) {
          const r = await client.listTools(cursor ? { cursor } : undefined, { timeout: left() });
          tools.push(...r.tools);
          cursor = r.nextCursor;
          if (!cursor) break;
        }
        return tools
          .slice(0, MAX_TOOLS)
          .map((t) => ({ name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), inputSchema: t.inputSchema }));
      });
    } catch (err) {
      throw mcpProblem(err);
    }
  }
}
