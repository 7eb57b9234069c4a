import { ProblemError, problemOf, toProblemDocument } from "@c402/problems";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
} from "@modelcontextprotocol/sdk/types.js";
import express, { Router, type NextFunction, type Request, type Response } from "express";
import { bigintAsString } from "../http/json";
import { authenticate, scopeCovers, type Credential } from "../http/auth";
import { MCP_SCOPES, protectedResourceMetadataUrl } from "../http/oauth-metadata";
import { mcpCors } from "../http/cors";
import type { GatewayDeps } from "../http/deps";
import { jsonBoundsViolation } from "../http/json-bounds";
import { validateObject } from "../http/validate";
import { bearerChallenge, setRetryAfter } from "../http/problems";
import { OneShotTransport } from "./one-shot-transport";
import type { McpTool } from "./tool";

/**
 * POST /mcp: JSON-RPC 2.0 over HTTP, one request object in and one JSON
 * object out; no SSE stream, no GET, no session header, and the Accept header
 * changes nothing (docs/decisions.md "MCP endpoint"). The official MCP SDK's
 * server dispatches (initialize, ping, tools/list, tools/call) through a
 * one-shot transport; the HTTP rules are ours:
 *  - a notification (no id) or a client's response: 202, empty;
 *  - CORS open to every origin (Bearer only, so no cookie rides along);
 *  - malformed JSON: 400 with -32700; a batch (array) or a non-request: 400 with -32600;
 *  - an unsupported MCP-Protocol-Version header: 400;
 *  - a seller tool without a valid credential (Authorization: Bearer, never a
 *    cookie): HTTP 401 with WWW-Authenticate, so a client can start its sign-in;
 *  - every other failure of a tool: a JSON-RPC error whose data is the problem
 *    document REST would have answered (-32602 for invalid arguments, -32000 otherwise).
 */

/** Bodies up to the REST limit (a create_checkout carries its goods). */
const MCP_BODY_BYTES = 512 * 1024;
/** JSON-RPC's own codes, and ours (-32000 to -32099 are the implementation's). */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
const SERVER_ERROR = -32000;
const UNAUTHORIZED = -32001;

type RequestId = string | number;

function rpcError(id: RequestId | null, code: number, message: string, data?: unknown) {
  return { jsonrpc: "2.0" as const, id, error: { code, message, ...(data !== undefined ? { data } : {}) } };
}

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

function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

export function mcpRoutes({ clients, settings, logger }: Pick<GatewayDeps, "clients" | "settings" | "logger">, tools: readonly McpTool[]): Router {
  const router = Router();
  const siteUrl = settings.siteUrl;
  // The 401's pointer to the OAuth server (RFC 9728), asking for both MCP scopes so one consent covers every tool.
  const challenge = { resourceMetadata: protectedResourceMetadataUrl(settings.baseUrl, "/mcp"), scope: MCP_SCOPES };
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listed = tools.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema }));
  /** Plain JSON of an answer (bigints as strings, as REST sends them). */
  const plain = (value: object) => JSON.parse(JSON.stringify(value, bigintAsString)) as Record<string, unknown>;

  const problemOfTool = (err: unknown, req: Request): ProblemError => {
    const problem = problemOf(err);
    if (problem !== err) logger.error({ err, request_id: req.requestId, path: req.path }, "an MCP tool failed");
    return problem;
  };

  /** The SDK server of one request: tools/list open to all, tools/call running the named tool for `credential`. */
  const serverFor = (req: Request, res: Response, credential: Credential | undefined) => {
    const server = new Server({ name: settings.serviceName, version: "1.0.0" }, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tool = byName.get(request.params.name);
      if (!tool) throw new ToolError(`Unknown tool: ${request.params.name}. tools/list names every tool.`, INVALID_PARAMS, undefined);
      try {
        // Every tool's arguments are checked against the schema tools/list publishes, here, once.
        const args = validateObject<Record<string, unknown>>(`mcp.${tool.name}`, tool.inputSchema, request.params.arguments ?? {});
        const result = plain(await tool.run(args, credential, { req, res }));
        return { content: [{ type: "text" as const, text: JSON.stringify(result) }], structuredContent: result };
      } catch (err) {
        const problem = problemOfTool(err, req);
        const code = problem.slug === "invalid-request" || problem.slug === "bad-request" ? INVALID_PARAMS : SERVER_ERROR;
        throw new ToolError(problem.message, code, toProblemDocument(problem, siteUrl));
      }
    });
    return server;
  };

  const answer = async (req: Request, res: Response, request: JSONRPCRequest, credential: Credential | undefined): Promise<JSONRPCMessage> => {
    const transport = new OneShotTransport();
    const server = serverFor(req, res, credential);
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
  };

  router.use("/mcp", mcpCors);
  // Anything but POST (and a CORS preflight): 405 (the SDK client takes it as "no stream here").
  router.all("/mcp", (req, res, next) => {
    if (req.method === "POST") return next();
    res.setHeader("Allow", "POST");
    res.status(405).json(rpcError(null, INVALID_REQUEST, "Method not allowed: send JSON-RPC requests with POST."));
  });

  router.post(
    "/mcp",
    // Whatever the Content-Type says, the body is JSON-RPC.
    express.json({ limit: MCP_BODY_BYTES, type: () => true, strict: false }),
    async (req: Request, res: Response) => {
      res.setHeader("Cache-Control", "no-store");
      const body: unknown = req.body;
      if (Array.isArray(body))
        return void res.status(400).json(rpcError(null, INVALID_REQUEST, "Batches are not supported: send one JSON-RPC object per request."));
      const message = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : undefined;
      const id = message && isRequestId(message.id) ? message.id : null;
      if (!message || message.jsonrpc !== "2.0")
        return void res.status(400).json(rpcError(id, INVALID_REQUEST, 'Not a JSON-RPC 2.0 message: send {"jsonrpc":"2.0","id":…,"method":…}.'));
      const bounds = jsonBoundsViolation(message);
      if (bounds) return void res.status(400).json(rpcError(id, INVALID_REQUEST, `The request is too large: ${bounds.field} ${bounds.reason}.`));
      // A client's notification or its answer to a server request: nothing to answer.
      if (!("id" in message) || "result" in message || "error" in message) return void res.status(202).end();
      if (id === null || typeof message.method !== "string")
        return void res.status(400).json(rpcError(id, INVALID_REQUEST, "A request needs an id (string or number) and a method."));
      const version = req.get("mcp-protocol-version");
      if (version !== undefined && message.method !== "initialize" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        return void res
          .status(400)
          .json(
            rpcError(id, SERVER_ERROR, `Bad Request: Unsupported protocol version ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}).`),
          );
      }
      const request = message as unknown as JSONRPCRequest;
      let credential: Credential | undefined;
      const params = message.params as { name?: unknown } | undefined;
      const tool = message.method === "tools/call" && typeof params?.name === "string" ? byName.get(params.name) : undefined;
      if (tool?.scope !== undefined) {
        try {
          credential = await authenticate(clients, req, res, { cookie: false, audience: "mcp" });
        } catch (err) {
          const problem = problemOfTool(err, req);
          if (problem.status === 401)
            res.setHeader("WWW-Authenticate", bearerChallenge(settings.serviceName, req.get("authorization") !== undefined, challenge));
          setRetryAfter(res, problem);
          const code = problem.status === 401 ? UNAUTHORIZED : SERVER_ERROR;
          return void res.status(problem.status).json(rpcError(id, code, problem.message, toProblemDocument(problem, siteUrl)));
        }
      }
      // An OAuth token below the tool's rung (mcp.read calling a write tool): HTTP 403, so the client can ask for more (RFC 6750 §3.1).
      if (tool?.scope !== undefined && credential?.kind === "oauth" && !scopeCovers(credential, tool.scope)) {
        res.setHeader("WWW-Authenticate", `Bearer error="insufficient_scope", scope="${MCP_SCOPES}", resource_metadata="${challenge.resourceMetadata}"`);
        const problem = new ProblemError("forbidden", {
          message: `The tool ${tool.name} needs the scope mcp.write; this token has mcp.read.`,
          extensions: { needed_scope: "mcp.write" },
        });
        return void res.status(403).json(rpcError(id, SERVER_ERROR, problem.message, toProblemDocument(problem, siteUrl)));
      }
      res.json(await answer(req, res, request, credential));
    },
  );

  // The body parser's failures, as JSON-RPC errors (never the REST problem documents).
  router.use("/mcp", (err: unknown, req: Request, res: Response, next: NextFunction) => {
    const type = (err as { type?: unknown } | null)?.type;
    if (type === "entity.too.large") return void res.status(413).json(rpcError(null, INVALID_REQUEST, `The request is larger than ${MCP_BODY_BYTES} bytes.`));
    if (type === "entity.parse.failed" || type === "charset.unsupported" || type === "encoding.unsupported") {
      return void res.status(400).json(rpcError(null, PARSE_ERROR, "Parse error: the body is not JSON."));
    }
    next(err);
  });

  return router;
}
