import { SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { jsonBoundsViolation } from "../http/json-bounds";

/** Bodies up to the REST limit (a create_checkout carries its goods). */
export const MCP_BODY_BYTES = 512 * 1024;
/** JSON-RPC's own codes, and ours (-32000 to -32099 are the implementation's). */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
export const SERVER_ERROR = -32000;
export const UNAUTHORIZED = -32001;

type RequestId = string | number;

export function rpcError(id: RequestId | null, code: number, message: string, data?: unknown) {
  return { jsonrpc: "2.0" as const, id, error: { code, message, ...(data !== undefined ? { data } : {}) } };
}

/** An HTTP answer to a POST /mcp that is not a tool's: a JSON-RPC error, or nothing (202). */
export interface RpcRefusal {
  status: number;
  body?: ReturnType<typeof rpcError>;
}

function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

/**
 * The JSON-RPC request a POST /mcp body carries, or its answer otherwise:
 * 400 for a batch, a non-request or an unsupported MCP-Protocol-Version
 * (`protocolVersion`, the header), 202 for a client's notification or answer.
 */
export function rpcRequestOf(body: unknown, protocolVersion: string | undefined): { request: JSONRPCRequest } | RpcRefusal {
  if (Array.isArray(body)) return { status: 400, body: rpcError(null, INVALID_REQUEST, "Batches are not supported: send one JSON-RPC object per request.") };
  const message = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : undefined;
  const id = message && isRequestId(message.id) ? message.id : null;
  if (!message || message.jsonrpc !== "2.0")
    return { status: 400, body: rpcError(id, INVALID_REQUEST, 'Not a JSON-RPC 2.0 message: send {"jsonrpc":"2.0","id":…,"method":…}.') };
  const bounds = jsonBoundsViolation(message);
  if (bounds) return { status: 400, body: rpcError(id, INVALID_REQUEST, `The request is too large: ${bounds.field} ${bounds.reason}.`) };
  // A client's notification or its answer to a server request: nothing to answer.
  if (!("id" in message) || "result" in message || "error" in message) return { status: 202 };
  if (id === null || typeof message.method !== "string")
    return { status: 400, body: rpcError(id, INVALID_REQUEST, "A request needs an id (string or number) and a method.") };
  if (protocolVersion !== undefined && message.method !== "initialize" && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) {
    const supported = SUPPORTED_PROTOCOL_VERSIONS.join(", ");
    return {
      status: 400,
      body: rpcError(id, SERVER_ERROR, `Bad Request: Unsupported protocol version ${protocolVersion} (supported versions: ${supported}).`),
    };
  }
  return { request: message as unknown as JSONRPCRequest };
}

/** The body parser's failures as JSON-RPC errors (never the REST problem documents), or undefined: not one of them. */
export function rpcBodyFailureOf(err: unknown): RpcRefusal | undefined {
  const type = (err as { type?: unknown } | null)?.type;
  if (type === "entity.too.large") return { status: 413, body: rpcError(null, INVALID_REQUEST, `The request is larger than ${MCP_BODY_BYTES} bytes.`) };
  if (type === "entity.parse.failed" || type === "charset.unsupported" || type === "encoding.unsupported") {
    return { status: 400, body: rpcError(null, PARSE_ERROR, "Parse error: the body is not JSON.") };
  }
  return undefined;
}
