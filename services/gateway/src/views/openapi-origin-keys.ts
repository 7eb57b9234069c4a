import { ORIGIN_AUTH_TYPE_NAMES } from "@c402/contracts";
import { bool, idOf, object, ref, str, strOrNull, timestamp, timestampOrNull, type Schema } from "./openapi-schema";

/**
 * The origin-key operations and shapes of the OpenAPI document (openapi.ts
 * merges them in and hands over its operation helpers, as for openapi-payouts.ts).
 */

type Part = Record<string, unknown> & { responses: Record<string, unknown> };

export interface OriginKeyOperationKit {
  operation: (op: Part, ...shared: Part[]) => unknown;
  authenticated: (minimumScope: "read_only" | "payments" | "full") => Part;
  bodyProblems: Part;
  use: (name: "NotFound" | "Conflict" | "InvalidRequest" | "UpstreamFailed") => unknown;
  json: (description: string, schema: Schema) => unknown;
  body: (name: "OriginKeyCreate" | "OriginKeyRotate" | "McpToolsRequest") => unknown;
  pathParam: (name: string, schema: Schema, description: string) => unknown;
  pageQuery: unknown[];
}

/** Request bodies a client could send as they are. */
export const ORIGIN_KEY_EXAMPLES = {
  OriginKeyCreate: { auth_type: "api_key", header_name: "X-Api-Key", value: "origin-secret-value", name: "weather API" },
  OriginKeyRotate: { value: "the-new-origin-secret" },
  McpToolsRequest: { origin_url: "https://mcp.example.com/mcp", origin_auth_type: "bearer", origin_auth_value: "seller-server-token" },
};

const originKeyProperties: Record<string, Schema> = {
  id: idOf("okey"),
  object: { const: "origin_key" },
  name: strOrNull,
  auth_type: { enum: [...ORIGIN_AUTH_TYPE_NAMES] },
  header_name: { ...strOrNull, description: "The header the value goes in (api_key and custom); null for bearer and basic (Authorization)" },
  checkouts_using: { type: "integer", minimum: 0, description: "How many checkouts reference the key" },
  created_at: timestamp,
  rotated_at: { ...timestampOrNull, description: "The last rotation (PATCH), if any" },
  revoked_at: timestampOrNull,
};

export function originKeyResponseSchemas(): Record<string, Schema> {
  return {
    OriginKey: object(originKeyProperties, { closed: true, description: "An origin key as shown: never its value" }),
    NewOriginKey: object(
      { ...originKeyProperties, note: str },
      { closed: true, description: "An origin key just stored (its value is not in the answer, now or ever)" },
    ),
    RevokedOriginKey: object(
      {
        ...originKeyProperties,
        revoked: { ...bool, description: "false when the key already was revoked (nothing changed)" },
        warning: { ...strOrNull, description: "Set when checkouts still reference the key" },
      },
      { closed: true, description: "The key after DELETE" },
    ),
    McpToolList: object(
      {
        origin_url: str,
        tools: {
          type: "array",
          items: object(
            { name: str, description: strOrNull, input_schema: { type: "object", description: "The tool's arguments as JSON Schema, as the server sent it" } },
            { closed: true },
          ),
        },
      },
      { closed: true, description: "The tools an MCP server offers (read now; nothing stored)" },
    ),
    OriginKeyList: object({ origin_keys: { type: "array", items: ref("OriginKey") }, has_more: bool, next_cursor: strOrNull }),
  };
}

export function originKeyPaths(k: OriginKeyOperationKit): Record<string, Record<string, unknown>> {
  const secretId = k.pathParam("secret_id", idOf("okey"), "Origin key id");
  return {
    "/v1/origin-keys": {
      post: k.operation(
        {
          operationId: "createOriginKey",
          summary: "Store a credential for your origin (sealed at rest; the value is never answered back)",
          description:
            "Relay and mcp checkouts reference it by `origin_auth_secret_id`. The value is sealed (AES-256-GCM under a per-key data key, the key's id bound as associated data) and appears in no answer, list, log or event. Recorded as an `origin_key.created` account event (auth type and header name only).",
          requestBody: k.body("OriginKeyCreate"),
          responses: { "201": k.json("The stored key", ref("NewOriginKey")) },
        },
        k.authenticated("payments"),
        k.bodyProblems,
      ),
      get: k.operation(
        {
          operationId: "listOriginKeys",
          summary: "The account's origin keys, newest first, revoked ones included, with checkouts_using",
          parameters: k.pageQuery,
          responses: { "200": k.json("A page of origin keys", ref("OriginKeyList")), "422": k.use("InvalidRequest") },
        },
        k.authenticated("read_only"),
      ),
    },
    "/v1/mcp/tools": {
      post: k.operation(
        {
          operationId: "listMcpTools",
          summary: "List the tools a seller's MCP server offers (initialize, then tools/list); nothing is stored",
          description:
            "The server is asked with the official MCP client through the outbound guard: an origin_url that resolves to a loopback, private, link-local or metadata address answers 422 naming it (loopback is allowed in embedded mode); a server that cannot be reached, times out (10 s per request), refuses the credential or the handshake answers 502 `upstream-failed`. Authenticate with a one-off credential (origin_auth_type and origin_auth_value, plus origin_auth_header for api_key and custom) or a stored origin key (origin_auth_secret_id), not both.",
          requestBody: k.body("McpToolsRequest"),
          responses: { "200": k.json("The server's tools", ref("McpToolList")), "502": k.use("UpstreamFailed") },
        },
        k.authenticated("payments"),
        k.bodyProblems,
      ),
    },
    "/v1/origin-keys/{secret_id}": {
      patch: k.operation(
        {
          operationId: "rotateOriginKey",
          summary: "Rotate the value: every checkout that references the key sends the new one from its next forward",
          description:
            "Only `value` may be sent (anything else is 422). A revoked key answers 409; another account's key 404. Recorded as `origin_key.rotated`.",
          parameters: [secretId],
          requestBody: k.body("OriginKeyRotate"),
          responses: { "200": k.json("The key", ref("OriginKey")), "404": k.use("NotFound"), "409": k.use("Conflict") },
        },
        k.authenticated("payments"),
        k.bodyProblems,
      ),
      delete: k.operation(
        {
          operationId: "revokeOriginKey",
          summary: "Revoke softly: the key stays listed, its value is never sent again; warns when checkouts still use it",
          description:
            "Revoking a revoked key answers 200 with `revoked: false` and records nothing; otherwise recorded as `origin_key.revoked`. Another account's key answers 404.",
          parameters: [secretId],
          responses: { "200": k.json("The revoked key", ref("RevokedOriginKey")), "404": k.use("NotFound") },
        },
        k.authenticated("payments"),
      ),
    },
  };
}
