import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError } from "./errors";
import { toJsonText } from "./json-text";

/** A method called with positional parameters (`params: [...]`, as Solana's). */
export type PositionalRpcMethod = (params: unknown[]) => unknown;
/** A method called with named parameters (`params: {...}`, as Stellar RPC's). */
export type NamedRpcMethod = (params: Record<string, unknown>) => unknown;

export interface RpcServerOptions {
  /** A loopback address (127.0.0.0/8); anything else is refused. */
  host: string;
  /** 0: the OS picks a free port. */
  port: number;
  /** A request body longer than this is refused with 413 before it is read to the end. */
  maxBodyBytes: number;
  /** A batch of more requests than this is refused whole. */
  maxBatchRequests: number;
  /** Told of errors that are the server's own fault (answered as -32603 Internal error). */
  onInternalError?: (method: string, err: unknown) => void;
  /** Serve HTTPS with this key and certificate chain (PEM) instead of plain HTTP. */
  tls?: { keyPem: string; certificatePem: string };
}

export interface RunningRpcServer {
  /** http(s)://<host>:<port> */
  url: string;
  close(): Promise<void>;
}

type JsonRpcId = string | number | null;
export type ParamsShape = "positional" | "named";

function errorResponse(id: JsonRpcId, code: number, message: string, data?: unknown) {
  return { jsonrpc: "2.0", error: data === undefined ? { code, message } : { code, message, data }, id };
}

/** Only loopback: a local node holds no real money but has cheats anyone reaching it could use. */
function assertLoopback(host: string): void {
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) throw new Error(`a local JSON-RPC node binds loopback only (127.0.0.0/8), not ${host}`);
}

/** The params as the methods take them, or null when their shape is wrong. Absent params are empty. */
function shapedParams(params: unknown, shape: ParamsShape): unknown[] | Record<string, unknown> | null {
  if (params === undefined || params === null) return shape === "positional" ? [] : {};
  if (shape === "positional") return Array.isArray(params) ? params : null;
  return typeof params === "object" && !Array.isArray(params) ? (params as Record<string, unknown>) : null;
}

async function answer(methods: Record<string, PositionalRpcMethod | NamedRpcMethod>, shape: ParamsShape, request: unknown, options: RpcServerOptions) {
  if (typeof request !== "object" || request === null || Array.isArray(request)) return errorResponse(null, INVALID_REQUEST, "Invalid request");
  const { jsonrpc, method, params, id: rawId } = request as Record<string, unknown>;
  const id: JsonRpcId = typeof rawId === "string" || typeof rawId === "number" ? rawId : null;
  if (jsonrpc !== "2.0" || typeof method !== "string") return errorResponse(id, INVALID_REQUEST, "Invalid request");
  if (!Object.hasOwn(methods, method)) return errorResponse(id, METHOD_NOT_FOUND, "Method not found");
  const shaped = shapedParams(params, shape);
  if (shaped === null) return errorResponse(id, INVALID_PARAMS, `Invalid params: expected ${shape === "positional" ? "an array" : "an object"}`);
  try {
    const result = await (methods[method] as (params: unknown) => unknown)(shaped);
    return { jsonrpc: "2.0", result, id };
  } catch (err) {
    if (err instanceof RpcError) return errorResponse(id, err.code, err.message, err.data);
    options.onInternalError?.(method, err);
    return errorResponse(id, INTERNAL_ERROR, "Internal error");
  }
}

function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (declared > maxBytes) return resolve(null);
    const chunks: Buffer[] = [];
    let length = 0;
    req.on("data", (chunk: Buffer) => {
      length += chunk.length;
      if (length > maxBytes) {
        req.removeAllListeners("data");
        req.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(body);
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  methods: Record<string, PositionalRpcMethod | NamedRpcMethod>,
  shape: ParamsShape,
  options: RpcServerOptions,
): Promise<void> {
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST" }).end();
    return;
  }
  const body = await readBody(req, options.maxBodyBytes);
  if (body === null) {
    // The rest of an oversize body is never read: close the connection rather than drain it.
    res.setHeader("connection", "close");
    send(res, 413, toJsonText(errorResponse(null, INVALID_REQUEST, `request body larger than ${options.maxBodyBytes} bytes`)));
    req.destroy();
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    send(res, 200, toJsonText(errorResponse(null, PARSE_ERROR, "Parse error")));
    return;
  }
  if (!Array.isArray(parsed)) {
    send(res, 200, toJsonText(await answer(methods, shape, parsed, options)));
    return;
  }
  if (parsed.length === 0 || parsed.length > options.maxBatchRequests) {
    const reason = parsed.length === 0 ? "empty batch" : `batch of more than ${options.maxBatchRequests} requests`;
    send(res, 200, toJsonText(errorResponse(null, INVALID_REQUEST, `Invalid request: ${reason}`)));
    return;
  }
  const answers = [];
  // In order, one after another: each request sees the node as the previous one left it.
  for (const request of parsed) answers.push(await answer(methods, shape, request, options));
  send(res, 200, toJsonText(answers));
}

/**
 * Serves JSON-RPC 2.0 over HTTP(S) POST on a loopback address. `params` says how the
 * methods take their parameters: "positional" (the default) or "named".
 */
export function serveJsonRpc<Shape extends ParamsShape = "positional">(
  methods: Record<string, Shape extends "named" ? NamedRpcMethod : PositionalRpcMethod>,
  options: RpcServerOptions & { params?: Shape },
): Promise<RunningRpcServer> {
  assertLoopback(options.host);
  const shape = options.params ?? "positional";
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res, methods, shape, options).catch((err: unknown) => {
      options.onInternalError?.("(http)", err);
      if (!res.headersSent) send(res, 500, toJsonText(errorResponse(null, INTERNAL_ERROR, "Internal error")));
      else res.destroy();
    });
  };
  const server: Server = options.tls
    ? createHttpsServer({ key: options.tls.keyPem, cert: options.tls.certificatePem }, onRequest)
    : createHttpServer(onRequest);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `${options.tls ? "https" : "http"}://${options.host}:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
