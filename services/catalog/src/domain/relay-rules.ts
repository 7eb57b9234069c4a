import { ORIGIN_AUTH_TYPE_NAMES, type OriginAuthTypeName } from "@c402/contracts";
import type { FieldError } from "@c402/problems";

/**
 * Which fulfillment a create asks for, and the relay fields that go with it
 * (docs/decisions.md "Fulfillment inferred at create"). `fulfillment` may be
 * sent or inferred from what is sent (mcp_tool → mcp, origin_url → relay,
 * anything else → inline); a combination that contradicts itself is refused
 * naming every field involved. Where the origin points and whether a stored key is usable
 * is fulfillment's to judge (RegisterOrigin).
 */

export const RELAY_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type RelayMethod = (typeof RELAY_METHODS)[number];
/** An MCP tool's name as a checkout fixes it (the MCP spec's names are 1 to 128 characters). */
const MCP_TOOL_NAME = /^[\x21-\x7e]{1,128}$/;

export interface RelayFieldsInput {
  fulfillment?: string;
  payloadJson?: string;
  originUrl?: string;
  originMethod?: string;
  originAuthType?: string;
  originAuthValue?: string;
  originAuthHeader?: string;
  originAuthSecretId?: string;
  mcpTool?: string;
}

/** How a relay checkout's calls authenticate, as the create named it (a one-off value goes to fulfillment, never into the catalog). */
export type OriginAuthChoice =
  { kind: "none" } | { kind: "one_off"; authType: OriginAuthTypeName; value: string; headerName?: string } | { kind: "origin_key"; originKeyId: string };

export interface RelayOrigin {
  url: string;
  method: RelayMethod;
  auth: OriginAuthChoice;
  /** An mcp checkout: url is the seller's MCP server, calls are tools/call over POST. */
  mcp?: { tool?: string };
}

export type Fulfillment = { mode: "inline" | "webhook" } | { mode: "relay" | "mcp"; origin: RelayOrigin };

const ORIGIN_FIELDS = [
  ["originMethod", "origin_method"],
  ["originAuthType", "origin_auth_type"],
  ["originAuthValue", "origin_auth_value"],
  ["originAuthHeader", "origin_auth_header"],
  ["originAuthSecretId", "origin_auth_secret_id"],
] as const;

/** The create's fulfillment, or the errors that name why it contradicts itself. */
export function fulfillmentOf(input: RelayFieldsInput, errors: FieldError[]): Fulfillment {
  const sent = input.fulfillment;
  const mode = sent ?? (input.mcpTool !== undefined ? "mcp" : input.originUrl !== undefined ? "relay" : "inline");
  if (input.mcpTool !== undefined && mode !== "mcp") {
    errors.push({ field: "mcp_tool", reason: `is for mcp checkouts, and fulfillment is ${mode}` });
    if (sent !== undefined) errors.push({ field: "fulfillment", reason: `${mode} contradicts mcp_tool` });
  }
  if (mode === "inline" || mode === "webhook") {
    if (mode === "webhook" && input.payloadJson !== undefined) {
      errors.push({ field: "payload", reason: "is inline goods; a webhook checkout's seller fulfils the sale (told by its checkout.paid event)" });
    }
    if (input.originUrl !== undefined) {
      errors.push({ field: "origin_url", reason: `is for relay checkouts, and fulfillment is ${mode} (leave fulfillment out, or send relay)` });
      errors.push({ field: "fulfillment", reason: `${mode} contradicts origin_url` });
    }
    for (const [key, field] of ORIGIN_FIELDS)
      if (input[key] !== undefined) errors.push({ field, reason: "is only for relay and mcp checkouts (send origin_url)" });
    return { mode };
  }
  if (mode !== "relay" && mode !== "mcp") {
    errors.push({ field: "fulfillment", reason: "must be inline, relay, mcp or webhook" });
    return { mode: "inline" };
  }
  if (input.originUrl === undefined) {
    errors.push({
      field: "origin_url",
      reason: mode === "mcp" ? "is required for mcp fulfillment (the seller's MCP server)" : "is required for relay fulfillment",
    });
  }
  if (input.payloadJson !== undefined) {
    errors.push({ field: "payload", reason: `is inline goods; a ${mode} checkout's goods come from its origin_url` });
  }
  const auth = authChoiceOf(input, errors);
  const url = input.originUrl ?? "";
  if (mode === "mcp") {
    // MCP is JSON-RPC over POST: the method is POST whatever else (sending another one is a mistake worth naming).
    if (input.originMethod !== undefined && input.originMethod !== "POST") {
      errors.push({ field: "origin_method", reason: "is POST for mcp checkouts (MCP is JSON-RPC over POST)" });
    }
    if (input.mcpTool !== undefined && !MCP_TOOL_NAME.test(input.mcpTool)) {
      errors.push({ field: "mcp_tool", reason: "must be a tool name of 1 to 128 visible ASCII characters" });
    }
    return { mode, origin: { url, method: "POST", auth, mcp: input.mcpTool !== undefined ? { tool: input.mcpTool } : {} } };
  }
  const method = RELAY_METHODS.find((m) => m === (input.originMethod ?? "GET"));
  if (!method) errors.push({ field: "origin_method", reason: `must be one of ${RELAY_METHODS.join(", ")}` });
  return { mode, origin: { url, method: method ?? "GET", auth } };
}

function authChoiceOf(input: RelayFieldsInput, errors: FieldError[]): OriginAuthChoice {
  const { originAuthType: type, originAuthValue: value, originAuthHeader: header, originAuthSecretId: secretId } = input;
  if (secretId !== undefined) {
    const extra = (
      [
        ["origin_auth_type", type],
        ["origin_auth_value", value],
        ["origin_auth_header", header],
      ] as const
    ).filter(([, v]) => v !== undefined);
    for (const [field] of extra) errors.push({ field, reason: "is not sent with origin_auth_secret_id (the origin key carries it)" });
    return { kind: "origin_key", originKeyId: secretId };
  }
  if (type === undefined) {
    if (value !== undefined) errors.push({ field: "origin_auth_type", reason: "is required with origin_auth_value" });
    if (header !== undefined) errors.push({ field: "origin_auth_type", reason: "is required with origin_auth_header (api_key or custom)" });
    return { kind: "none" };
  }
  const authType = ORIGIN_AUTH_TYPE_NAMES.find((t) => t === type);
  if (!authType) {
    errors.push({ field: "origin_auth_type", reason: `must be one of ${ORIGIN_AUTH_TYPE_NAMES.join(", ")}` });
    return { kind: "none" };
  }
  if (value === undefined) {
    errors.push({ field: "origin_auth_value", reason: "is required with origin_auth_type (or send origin_auth_secret_id instead)" });
    return { kind: "none" };
  }
  return { kind: "one_off", authType, value, ...(header !== undefined ? { headerName: header } : {}) };
}
