// Imported as @c402/testkit/fake-mcp-server, not from the index: only the suites that use it load the MCP SDK.
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/** A tool the fake server offers; a call answers `answer(arguments)` as text content. */
export interface FakeMcpTool {
  name: string;
  description?: string;
  inputSchema: { type: "object"; properties?: Record<string, object>; required?: string[] };
  answer?: (args: Record<string, unknown>) => string;
}

export interface FakeMcpServer {
  /** The endpoint, http://127.0.0.1:<port>/mcp. */
  url: string;
  /** The headers of every HTTP request it received, in order. */
  requests: { method: string; headers: IncomingHttpHeaders }[];
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
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      const tool = opts.tools.find((t) => t.name === request.params.name);
      if (!tool) return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true };
      return { content: [{ type: "text", text: tool.answer?.(request.params.arguments ?? {}) ?? "" }] };
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
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
