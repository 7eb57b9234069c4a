import { ProblemError, problemOf, toProblemDocument } from "@c402/problems";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type JSONRPCMessage, type JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Request, Response } from "express";
import { authenticate, scopeCovers, type Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import { bigintAsString } from "../http/json";
import { MCP_SCOPES, protectedResourceMetadataUrl } from "../http/oauth-metadata";
import { bearerChallenge, setRetryAfter } from "../http/problems";
import { validateObject } from "../http/validate";
import { INVALID_PARAMS, rpcError, SERVER_ERROR, UNAUTHORIZED, type RpcRefusal } from "./json-rpc";
import { OneShotTransport } from "./one-shot-transport";
import type { McpTool } from "./tool";

/** A tool's failure as the SDK sends it: its own code and the problem document as data. */
class ToolError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly data: unknown,
  ) {
    super(message);
  }
}

/** Plain JSON of an answer (bigints as strings, as REST sends them). */
const plain = (value: object) => JSON.parse(JSON.stringify(value, bigintAsString)) as Record<string, unknown>;

/**
 * The MCP side of POST /mcp: who may call the requested tool, and the
 * answer the official SDK's server gives (initialize, ping, tools/list,
 * tools/call) through a one-shot transport. A tool's failure is a JSON-RPC
 * error whose data is the problem document REST would have answered.
 */
export class McpToolCalls {
  private readonly byName: Map<string, McpTool>;
  private readonly listed: { name: string; title: string; description: string; inputSchema: McpTool["inputSchema"] }[];
  /** The 401's pointer to the OAuth server (RFC 9728), asking for both MCP scopes so one consent covers every tool. */
  private readonly challenge: { resourceMetadata: string; scope: string };

  constructor(
    private readonly deps: Pick<GatewayDeps, "clients" | "settings" | "logger">,
    tools: readonly McpTool[],
  ) {
    this.byName = new Map(tools.map((t) => [t.name, t]));
    this.listed = tools.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema }));
    this.challenge = { resourceMetadata: protectedResourceMetadataUrl(deps.settings.baseUrl, "/mcp"), scope: MCP_SCOPES };
  }

  /**
   * The credential a seller tool runs for (Authorization: Bearer, never a
   * cookie), or the HTTP refusal: 401 with WWW-Authenticate so a client can
   * start its sign-in, 403 for an OAuth token below the tool's rung. Anything
   * but a seller tool's call needs none.
   */
  async credentialFor(req: Request, res: Response, request: JSONRPCRequest): Promise<{ credential?: Credential } | RpcRefusal> {
    const params = request.params as { name?: unknown } | undefined;
    const tool = request.method === "tools/call" && typeof params?.name === "string" ? this.byName.get(params.name) : undefined;
    if (tool?.scope === undefined) return {};
    const { clients, settings } = this.deps;
    let credential: Credential;
    try {
      credential = await authenticate(clients, req, res, { cookie: false, audience: "mcp" });
    } catch (err) {
      const problem = this.problemOfTool(err, req);
      if (problem.status === 401)
        res.setHeader("WWW-Authenticate", bearerChallenge(settings.serviceName, req.get("authorization") !== undefined, this.challenge));
      setRetryAfter(res, problem);
      const code = problem.status === 401 ? UNAUTHORIZED : SERVER_ERROR;
      return { status: problem.status, body: rpcError(request.id, code, problem.message, toProblemDocument(problem, settings.siteUrl)) };
    }
    // An OAuth token below the tool's rung (mcp.read calling a write tool): HTTP 403, so the client can ask for more (RFC 6750 §3.1).
    if (credential.kind === "oauth" && !scopeCovers(credential, tool.scope)) {
      res.setHeader("WWW-Authenticate", `Bearer error="insufficient_scope", scope="${MCP_SCOPES}", resource_metadata="${this.challenge.resourceMetadata}"`);
      const problem = new ProblemError("forbidden", {
        message: `The tool ${tool.name} needs the scope mcp.write; this token has mcp.read.`,
        extensions: { needed_scope: "mcp.write" },
      });
      return { status: 403, body: rpcError(request.id, SERVER_ERROR, problem.message, toProblemDocument(problem, settings.siteUrl)) };
    }
    return { credential };
  }

  /** The SDK server's answer to `request`, a tool running for `credential`. */
  async answer(req: Request, res: Response, request: JSONRPCRequest, credential: Credential | undefined): Promise<JSONRPCMessage> {
    const transport = new OneShotTransport();
    const server = this.serverFor(req, res, credential);
    await server.connect(transport);
    try {
      transport.deliver(request, {
        requestInfo: { headers: {} },
        ...(credential ? { authInfo: { token: "", clientId: credential.actor, scopes: [credential.scope], extra: { accountId: credential.accountId } } } : {}),
      });
      return await transport.answered;
    } finally {
      await server.close();
    }
  }

  /** The SDK server of one request: tools/list open to all, tools/call running the named tool for `credential`. */
  private serverFor(req: Request, res: Response, credential: Credential | undefined): Server {
    const server = new Server({ name: this.deps.settings.serviceName, version: "1.0.0" }, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: this.listed }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tool = this.byName.get(request.params.name);
      if (!tool) throw new ToolError(`Unknown tool: ${request.params.name}. tools/list names every tool.`, INVALID_PARAMS, undefined);
      try {
        // Every tool's arguments are checked against the schema tools/list publishes, here, once.
        const args = validateObject<Record<string, unknown>>(`mcp.${tool.name}`, tool.inputSchema, request.params.arguments ?? {});
        const result = plain(await tool.run(args, credential, { req, res }));
        return { content: [{ type: "text" as const, text: JSON.stringify(result) }], structuredContent: result };
      } catch (err) {
        const problem = this.problemOfTool(err, req);
        const code = problem.slug === "invalid-request" || problem.slug === "bad-request" ? INVALID_PARAMS : SERVER_ERROR;
        throw new ToolError(problem.message, code, toProblemDocument(problem, this.deps.settings.siteUrl));
      }
    });
    return server;
  }

  /** A failure as its problem; one of ours (not a problem already) is logged. */
  private problemOfTool(err: unknown, req: Request): ProblemError {
    const problem = problemOf(err);
    if (problem !== err) this.deps.logger.error({ err, request_id: req.requestId, path: req.path }, "an MCP tool failed");
    return problem;
  }
}
