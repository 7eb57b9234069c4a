// Imported as @c402/testkit/fake-mcp-server, not from the index: only the suites that use it load the MCP SDK.
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

/**
 * A tool the fake server offers; a call answers `answer(arguments)` as text
 * content; `{ error }` answers a result with isError, `{ invalidParams }`
 * the JSON-RPC invalid-params error (-32602), which is also what an unknown
 * tool gets, as the SDK's McpServer answers it.
 */
export interface FakeMcpTool {
  name: string;
  description?: string;
  inputSchema: { type: "object"; properties?: Record<string, object>; required?: string[] };
  answer?: (args: Record<string, unknown>) => string | { error: string } | { invalidParams: string };
  /** The tool takes this long before it answers (a slow seller's tool). */
  delayMs?: number;
}

export interface FakeMcpServer {
  /** The endpoint, http://127.0.0.1:<port>/mcp. */
  url: string;
  /** The headers of every HTTP request it received, in order. */
  requests: { method: string; headers: IncomingHttpHeaders }[];
  /** Every tools/call it answered, in order. */
  toolCalls: { name: string; arguments: Record<string, unknown> }[];
  close(): Promise<void>;
}

/**
 * A seller's MCP server on loopback, built with the official SDK (stateless:
 * a new server and transport per request, as the SDK's own example does).
 * `json` answers application/json, otherwise text/event-stream; `requireHeader`
 * makes it answer 401 to a request without that header and value.
 */
export async function startFakeMcpServer(opts: {
  tools: FakeMcpTool[];
  json?: boolean;
  requireHeader?: { name: string; value: string };
}): Promise<FakeMcpServer> {
  const requests: FakeMcpServer["requests"] = [];
  const toolCalls: FakeMcpServer["toolCalls"] = [];
  const http: HttpServer = createServer((req, res) => {
    requests.push({ method: req.method ?? "", headers: req.headers });
    if (req.url !== "/mcp") return void res.writeHead(404).end();
    const required = opts.requireHeader;
    if (required && req.headers[required.name.toLowerCase()] !== required.value)
      return void res.writeHead(401, { "content-type": "text/plain" }).end("unauthorized");
    if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
    const server = new Server({ name: "fake-seller", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: opts.tools.map((t) => ({ name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), inputSchema: t.inputSchema })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      toolCalls.push({ name: request.params.name, arguments: request.params.arguments ?? {} });
      const tool = opts.tools.find((t) => t.name === request.params.name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
      if (tool.delayMs) await new Promise((r) => setTimeout(r, tool.delayMs));
      const answer = tool.answer?.(request.params.arguments ?? {}) ?? "";
      if (typeof answer !== "string" && "invalidParams" in answer) throw new McpError(ErrorCode.InvalidParams, answer.invalidParams);
      if (typeof answer !== "string") return { content: [{ type: "text", text: answer.error }], isError: true };
      return { content: [{ type: "text", text: answer }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: opts.json ?? true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    toolCalls,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
