import type { fulfillmentV1 } from "@c402/contracts";

/** A server's tools as POST /v1/mcp/tools answers them: name, description and the arguments' JSON Schema as the server sent it. */
export function mcpToolsView(r: fulfillmentV1.ListMcpToolsResponse) {
  return {
    origin_url: r.originUrl,
    tools: r.tools.map((t) => ({ name: t.name, description: t.description ?? null, input_schema: JSON.parse(t.inputSchemaJson) as unknown })),
  };
}
