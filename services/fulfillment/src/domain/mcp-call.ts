import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { GuardedFetch } from "@c402/outbound-http";
import type { FieldError } from "@c402/problems";
import { refusalIn, withMcpSession } from "./mcp-session";
import type { OriginCredential } from "./origin-keys";
import { BODY_MAX_CHARS, failureSince, refusalReason, type RelayOutcome } from "./relay-call";

/**
 * One tools/call on a seller's MCP server for a buyer's payment (an mcp
 * checkout), and what it means for the charge (docs/decisions.md "mcp
 * purchases"): a result is delivered and charged; the server refusing the
 * buyer's arguments (JSON-RPC invalid params) is the buyer's request error,
 * charged like a relay origin's 422; a tool that reports an error
 * (`isError`), a transport or protocol failure, a refused credential, a
 * timeout are the seller's failure and are not charged.
 */

export const TOOL_PARAM = "tool";
export const ARGUMENTS_PARAM = "arguments";

export interface McpTarget {
  originUrl: string;
  /** The one tool a per-tool checkout sells; absent: the buyer names any tool of the server. */
  fixedTool?: string;
  credential?: OriginCredential;
}

/** The buyer's parameters of an mcp call, checked (the 422 before anything is recorded): `tool` and `arguments` only. */
export function mcpRequestErrors(target: Pick<McpTarget, "fixedTool">, params: Record<string, string>): FieldError[] {
  const errors: FieldError[] = [];
  for (const name of Object.keys(params)) {
    if (name !== TOOL_PARAM && name !== ARGUMENTS_PARAM) {
      errors.push({ field: `params.${name.slice(0, 100)}`, reason: "is not a parameter of an mcp checkout (send tool and arguments)" });
    }
  }
  const tool = params[TOOL_PARAM];
  if (target.fixedTool !== undefined && tool !== undefined && tool !== target.fixedTool) {
    errors.push({ field: `params.${TOOL_PARAM}`, reason: `this checkout sells the tool ${target.fixedTool} only` });
  }
  if (target.fixedTool === undefined && (tool === undefined || tool.length === 0 || tool.length > 128)) {
    errors.push({ field: `params.${TOOL_PARAM}`, reason: "is required: this checkout sells any tool of the server, name one (1 to 128 characters)" });
  }
  const args = params[ARGUMENTS_PARAM];
  if (args !== undefined) {
    if (args.length > BODY_MAX_CHARS) errors.push({ field: `params.${ARGUMENTS_PARAM}`, reason: `must be at most ${BODY_MAX_CHARS} characters` });
    else if (!isJsonObject(args)) errors.push({ field: `params.${ARGUMENTS_PARAM}`, reason: "must be a JSON object" });
  }
  return errors;
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** Calls the tool once (initialize, then tools/call, within `deadlineMs`) and classifies the answer. Check the parameters with mcpRequestErrors first. */
export async function callMcpTool(fetch: GuardedFetch, target: McpTarget, params: Record<string, string>, deadlineMs: number): Promise<RelayOutcome> {
  const name = target.fixedTool ?? (params[TOOL_PARAM] as string);
  const args = params[ARGUMENTS_PARAM] === undefined ? {} : (JSON.parse(params[ARGUMENTS_PARAM]) as Record<string, unknown>);
  const started = performance.now();
  const failed = failureSince(started);
  let result: Awaited<ReturnType<Client["callTool"]>>;
  try {
    result = await withMcpSession(fetch, { originUrl: target.originUrl, credential: target.credential, deadlineMs }, (client, left) =>
      client.callTool({ name, arguments: args }, undefined, { timeout: left() }),
    );
  } catch (err) {
    return classifyFailure(err, failed, () => Math.round(performance.now() - started));
  }
  const body = Buffer.from(JSON.stringify(result), "utf8");
  const latencyMs = Math.round(performance.now() - started);
  // The tool ran and reported its own error: it cannot be told from a failure of the seller's, so it is not charged.
  if (result.isError === true) return failed("tool_error", 200);
  return { kind: "delivered", charged: true, status: 200, contentType: "application/json", body, latencyMs, bytes: body.length };
}

function classifyFailure(err: unknown, failed: ReturnType<typeof failureSince>, elapsed: () => number): RelayOutcome {
  const refusal = refusalIn(err);
  if (refusal) return failed(refusalReason(refusal));
  if (err instanceof StreamableHTTPError && typeof err.code === "number" && err.code >= 100) {
    if (err.code === 401 || err.code === 403) return failed("origin_refused_credential", err.code);
    if (err.code === 429) return failed("origin_rate_limited", err.code);
    if (err.code >= 500) return failed("origin_error", err.code);
    return failed("unexpected_status", err.code);
  }
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) return failed("timeout");
    // The server refused the buyer's arguments (or the tool name the buyer chose): the buyer's request error, charged.
    if (err.code === ErrorCode.InvalidParams) {
      const body = Buffer.from(JSON.stringify({ error: { code: err.code, message: err.message } }), "utf8");
      return { kind: "buyer_error", charged: true, status: 422, contentType: "application/json", body, latencyMs: elapsed(), bytes: body.length };
    }
    return failed("protocol_error");
  }
  if (err instanceof DOMException && (err.name === "TimeoutError" || err.name === "AbortError")) return failed("timeout");
  // Anything else the SDK raises is an answer that is not MCP.
  return failed("protocol_error");
}
