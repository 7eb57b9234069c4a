import express, { Router, type NextFunction, type Request, type Response } from "express";
import { mcpCors } from "../http/cors";
import type { GatewayDeps } from "../http/deps";
import { INVALID_REQUEST, MCP_BODY_BYTES, rpcBodyFailureOf, rpcError, rpcRequestOf, type RpcRefusal } from "./json-rpc";
import type { McpTool } from "./tool";
import { McpToolCalls } from "./tool-calls";

/**
 * POST /mcp: JSON-RPC 2.0 over HTTP, one request object in and one JSON
 * object out; no SSE stream, no GET, no session header, and the Accept header
 * changes nothing (docs/decisions.md "MCP endpoint"). The official MCP SDK's
 * server dispatches (initialize, ping, tools/list, tools/call) through a
 * one-shot transport (tool-calls.ts); the HTTP rules are ours:
 *  - a notification (no id) or a client's response: 202, empty;
 *  - CORS open to every origin (Bearer only, so no cookie rides along);
 *  - malformed JSON: 400 with -32700; a batch (array) or a non-request: 400 with -32600 (json-rpc.ts);
 *  - an unsupported MCP-Protocol-Version header: 400;
 *  - a seller tool without a valid credential (Authorization: Bearer, never a
 *    cookie): HTTP 401 with WWW-Authenticate, so a client can start its sign-in;
 *  - every other failure of a tool: a JSON-RPC error whose data is the problem
 *    document REST would have answered (-32602 for invalid arguments, -32000 otherwise).
 */
export function mcpRoutes(deps: Pick<GatewayDeps, "clients" | "settings" | "logger">, tools: readonly McpTool[]): Router {
  const router = Router();
  const calls = new McpToolCalls(deps, tools);

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
      const received = rpcRequestOf(req.body, req.get("mcp-protocol-version"));
      if ("status" in received) return sendRefusal(res, received);
      const caller = await calls.credentialFor(req, res, received.request);
      if ("status" in caller) return sendRefusal(res, caller);
      res.json(await calls.answer(req, res, received.request, caller.credential));
    },
  );

  // The body parser's failures, as JSON-RPC errors (never the REST problem documents).
  router.use("/mcp", (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const refusal = rpcBodyFailureOf(err);
    if (!refusal) return next(err);
    sendRefusal(res, refusal);
  });

  return router;
}

function sendRefusal(res: Response, refusal: RpcRefusal): void {
  if (refusal.body === undefined) res.status(refusal.status).end();
  else res.status(refusal.status).json(refusal.body);
}
