import { invalid } from "@c402/problems";
import { schemas } from "../http/request-schemas";
import { listMcpTools } from "../operations/mcp-servers";
import { asQuery, pageProperties, sellerTool, type McpTool, type McpToolDefinition } from "./tool";

// The seller's checkouts: creating, arming, reading them, and what its own MCP server offers for one.

const CHECKOUT_ID = { type: "string", minLength: 1, maxLength: 64, description: "The checkout's id (chk_…)." } as const;
const checkoutRef = { type: "object", additionalProperties: false, required: ["checkout_id"], properties: { checkout_id: CHECKOUT_ID } } as const;

/**
 * create_checkout's arguments: the REST create body's, but `calls` for
 * `max_deliveries` (still accepted by its older name), `reusable` true unless
 * said otherwise, no `test_mode` (the credential decides the mode).
 */
function createCheckoutSchema(): McpTool["inputSchema"] {
  const left = new Set<string>(["test_mode", "max_deliveries"]);
  const rest = schemas.CheckoutCreate.properties;
  const properties: Record<string, unknown> = Object.fromEntries(Object.entries(rest).filter(([name]) => !left.has(name)));
  properties.reusable = { type: "boolean", description: "true (the default here): a payment link anyone may pay again; false: single-shot." };
  properties.calls = { ...rest.max_deliveries, description: rest.max_deliveries.description };
  properties.max_deliveries = { ...rest.max_deliveries, description: "The older name of calls." };
  return { type: "object", additionalProperties: false, required: [...schemas.CheckoutCreate.required], properties };
}

export const createCheckoutTool: McpToolDefinition = ({ checkouts }) =>
  sellerTool({
    name: "create_checkout",
    title: "Create a checkout",
    description:
      "Creates a checkout (as POST /v1/checkouts) and answers it, with url (the live face) and test_url (the rehearsal face). " +
      "A test key's checkouts rehearse until go_live; a live key's are armed. For an mcp checkout, call list_mcp_tools first so mcp_tool names a tool the server has. " +
      "escrow_offer optional also creates an escrow twin (answered as escrow_twin, its face /e/<id>) under the account's escrow settings; required makes the checkout an escrow one (esc_…, face /e/<id>).",
    inputSchema: createCheckoutSchema(),
    scope: "payments",
    async run(args, seller) {
      const { calls, max_deliveries: olderName, ...rest } = args;
      if (calls !== undefined && olderName !== undefined) {
        throw invalid([{ field: "calls", reason: "is max_deliveries by its newer name: send one of the two" }]);
      }
      const packageCalls = calls ?? olderName;
      const body = { ...rest, reusable: rest.reusable ?? true, ...(packageCalls !== undefined ? { max_deliveries: packageCalls } : {}) };
      return (await checkouts.create(seller, body)).checkout;
    },
  });

export const goLiveTool: McpToolDefinition = ({ checkouts }) =>
  sellerTool({
    name: "go_live",
    title: "Go live",
    description: "Arms a checkout's live face (as POST /v1/checkouts/{id}/go-live): from then on it settles real payments on-chain.",
    inputSchema: checkoutRef,
    scope: "payments",
    run: async (args, seller) => checkouts.goLive(seller, String(args.checkout_id)),
  });

export const listCheckoutsTool: McpToolDefinition = ({ checkouts }) =>
  sellerTool({
    name: "list_checkouts",
    title: "List checkouts",
    description: "A page of the seller's checkouts, newest first (as GET /v1/checkouts); pass next_cursor as cursor for the next page.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: { ...pageProperties, include_voided: { type: "boolean", description: "Include voided checkouts (default false)." } },
    },
    scope: "read_only",
    run: async (args, seller) => checkouts.list(seller, asQuery(args)),
  });

export const getCheckoutTool: McpToolDefinition = ({ checkouts }) =>
  sellerTool({
    name: "get_checkout",
    title: "Get a checkout",
    description: "One of the seller's checkouts (as GET /v1/checkouts/{id}).",
    inputSchema: checkoutRef,
    scope: "read_only",
    run: async (args, seller) => checkouts.get(seller, String(args.checkout_id)),
  });

export const listMcpToolsTool: McpToolDefinition = ({ deps }) =>
  sellerTool({
    name: "list_mcp_tools",
    title: "List an MCP server's tools",
    description:
      "What the seller's own MCP server at origin_url offers (as POST /v1/mcp/tools), with the credential it needs; call it before creating an mcp checkout so mcp_tool names a tool the server has. Nothing is stored.",
    inputSchema: schemas.McpToolsRequest,
    scope: "payments",
    run: async (args, seller) => listMcpTools(deps, seller, args),
  });
