import { invalid } from "@c402/problems";
import { isId } from "@c402/ids";
import { schemas } from "../http/request-schemas";
import { ESCROW_ACTIONS, ESCROW_LIST_STATES } from "../views/escrows";
import { asQuery, pageProperties, sellerTool, type McpToolDefinition } from "./tool";

// Escrows after the deposit: the seller's tools (list, get, the arbiter's ruling) run the
// /v1/escrows routes' operations; the buyer-side actions need no credential, as on /e/{id}/actions.

const PAYMENT_ID = { type: "string", minLength: 1, maxLength: 64, description: "The escrow's payment id (pay_…)." } as const;
const ACTION = {
  type: "string",
  enum: Object.keys(ESCROW_ACTIONS),
  description: "hold, approve or request-refund (the buyer's); cancel (the seller's).",
} as const;
const ESCROW_CHECKOUT = { type: "string", minLength: 1, maxLength: 2048, description: "The escrow checkout: its esc_ id or its URL (…/e/<id>)." } as const;
const TO_SELLER = { type: "boolean", description: "true pays the seller, false refunds the buyer." } as const;

/** An escrow checkout named by its id or by its /e/ URL. */
function escrowCheckoutNamed(reference: string): string {
  const match = /^(?:(?:https?:\/\/[^/]+)?\/e\/)?([A-Za-z0-9_]+)(?:\/[A-Za-z0-9_/-]*)?\/?(?:[?#].*)?$/.exec(reference.trim());
  const id = match?.[1];
  if (id === undefined || !isId("escrowCheckout", id))
    throw invalid([{ field: "checkout", reason: "must be an escrow checkout id (esc_…) or its URL (…/e/<id>)" }]);
  return id;
}

export const listEscrowsTool: McpToolDefinition = ({ escrows }) =>
  sellerTool({
    name: "list_escrows",
    title: "List escrows",
    description: "The seller's escrows, newest first (as GET /v1/escrows): status filters by held, on_hold or escalated. Paged like every list.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: { status: { type: "string", enum: Object.keys(ESCROW_LIST_STATES), description: "Only escrows in this state." }, ...pageProperties },
    },
    scope: "read_only",
    run: async (args, seller) => escrows.list(seller, asQuery(args)),
  });

export const getEscrowTool: McpToolDefinition = ({ escrows }) =>
  sellerTool({
    name: "get_escrow",
    title: "Get an escrow",
    description: "One of the seller's escrows (as GET /v1/escrows/{payment_id}): its frozen terms, state, deadlines, transactions and what happens next.",
    inputSchema: { type: "object", additionalProperties: false, required: ["payment_id"], properties: { payment_id: PAYMENT_ID } },
    scope: "read_only",
    run: async (args, seller) => escrows.get(seller, String(args.payment_id)),
  });

export const resolveEscrowTool: McpToolDefinition = ({ escrows }) =>
  sellerTool({
    name: "resolve_escrow",
    title: "Prepare an arbiter's ruling",
    description:
      "For an escalated escrow (as POST /v1/escrows/{payment_id}/resolve): the UNSIGNED ruling transaction for the arbiter wallet named in from_. On Base the arbiter signs and broadcasts it itself; the service holds no arbiter key.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      required: ["payment_id", "to_seller"],
      properties: { payment_id: PAYMENT_ID, to_seller: TO_SELLER },
    },
    scope: "payments",
    run: async (args, seller) => escrows.resolve(seller, String(args.payment_id), String(args.to_seller)),
  });

export const resolveEscrowSubmitTool: McpToolDefinition = ({ escrows }) =>
  sellerTool({
    name: "resolve_escrow_submit",
    title: "Broadcast an arbiter's ruling",
    description:
      "Solana escrows only (as POST /v1/escrows/{payment_id}/resolve/submit): broadcast the arbiter-signed ruling on the service's gas. This deployment offers no Solana escrow, so a Base escrow answers 409 naming resolve_escrow.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      required: ["payment_id", "to_seller"],
      properties: { payment_id: PAYMENT_ID, to_seller: TO_SELLER },
    },
    scope: "payments",
    run: async (args, seller) => escrows.resolveSubmit(seller, String(args.payment_id), String(args.to_seller)),
  });

export const escrowActionTool: McpToolDefinition = ({ escrows }) => ({
  name: "escrow_action",
  title: "Prepare an escrow action",
  description:
    "What to sign to act on an escrow (as POST /e/{id}/actions/{action}): the EIP-712 typed data, the wallet that must sign it (the buyer's; the seller's for cancel), its deadline, and the self-broadcast transaction. With gasless, send the signature to escrow_submit. No credential needed.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["checkout", "action", "payment_id"],
    properties: { checkout: ESCROW_CHECKOUT, action: ACTION, payment_id: PAYMENT_ID },
  },
  run: async (args) => escrows.prepareAction(escrowCheckoutNamed(String(args.checkout)), String(args.action), args.payment_id),
});

export const escrowSubmitTool: McpToolDefinition = ({ escrows }) => ({
  name: "escrow_submit",
  title: "Submit a signed escrow action",
  description:
    "Relays a signed escrow action on the service's gas (as POST /e/{id}/actions/{action}/submit): v, r, s of the signature of escrow_action's typed data, and its deadline. No credential needed: the contract accepts only the wallet the action needs.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["checkout", "action", "payment_id", ...schemas.EscrowActionSubmit.required],
    properties: { checkout: ESCROW_CHECKOUT, action: ACTION, payment_id: PAYMENT_ID, ...schemas.EscrowActionSubmit.properties },
  },
  async run(args) {
    const { checkout, action, payment_id, ...signature } = args;
    return escrows.submitAction(escrowCheckoutNamed(String(checkout)), String(action), payment_id, signature);
  },
});
