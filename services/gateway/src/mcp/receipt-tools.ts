import { asQuery, pageProperties, sellerTool, type McpToolDefinition } from "./tool";

// The seller's receipts ledger: sales, payouts, and the webhook sales still to fulfil.

const receiptRef = {
  type: "object",
  additionalProperties: false,
  required: ["receipt_id"],
  properties: { receipt_id: { type: "string", minLength: 1, maxLength: 64, description: "The receipt's id: its payment's (pay_…)." } },
} as const;
/** The ledger's filters beside the page: a platform's sub-seller and a settlement window. */
const ledgerFilters = {
  sold_by: { type: "string", minLength: 1, maxLength: 200, description: "Only sales a platform made for this sub-seller." },
  from: { type: "string", maxLength: 40, description: "Settled at or after (ISO 8601)." },
  to: { type: "string", maxLength: 40, description: "Settled before (ISO 8601)." },
} as const;

export const listReceiptsTool: McpToolDefinition = ({ receipts }) =>
  sellerTool({
    name: "list_receipts",
    title: "List receipts",
    description: "A page of the seller's receipts ledger, newest first (as GET /v1/receipts): real payments, or the rehearsal ledger with test_mode true.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        ...pageProperties,
        test_mode: { type: "boolean", description: "true: the rehearsal ledger; false (default): real payments." },
        ...ledgerFilters,
      },
    },
    scope: "read_only",
    run: async (args, seller) => receipts.list(seller, asQuery(args)),
  });

export const getReceiptTool: McpToolDefinition = ({ receipts }) =>
  sellerTool({
    name: "get_receipt",
    title: "Get a receipt",
    description: "One of the seller's receipts (as GET /v1/receipts/{id}); a payment still settling answers status pending and its transaction hash.",
    inputSchema: receiptRef,
    scope: "read_only",
    run: async (args, seller) => (await receipts.get(seller, String(args.receipt_id))).receipt,
  });

export const getPayoutHistoryTool: McpToolDefinition = ({ receipts }) =>
  sellerTool({
    name: "get_payout_history",
    title: "Get payout history",
    description:
      "What reached the seller's payout wallets, newest first: every real sale pays the seller's share straight to pay_to in its own transaction (non-custodial), so each is one payout with its amount, network and tx_hash. Rehearsals are never payouts.",
    inputSchema: { type: "object", additionalProperties: false, properties: { ...pageProperties, ...ledgerFilters } },
    scope: "read_only",
    run: async (args, seller) => receipts.payoutHistory(seller, asQuery(args)),
  });

export const listAwaitingFulfilmentTool: McpToolDefinition = ({ receipts }) =>
  sellerTool({
    name: "list_awaiting_fulfilment",
    title: "List sales awaiting fulfilment",
    description: "Webhook sales the seller has not marked fulfilled yet, newest first (as GET /v1/receipts/awaiting-fulfilment).",
    inputSchema: { type: "object", additionalProperties: false, properties: pageProperties },
    scope: "read_only",
    run: async (args, seller) => receipts.awaitingFulfilment(seller, asQuery(args)),
  });

export const markFulfilledTool: McpToolDefinition = ({ receipts }) =>
  sellerTool({
    name: "mark_fulfilled",
    title: "Mark a sale fulfilled",
    description: "Closes a webhook sale out once its goods were delivered (as POST /v1/receipts/{id}/fulfilled); again is harmless (already_fulfilled).",
    inputSchema: receiptRef,
    scope: "payments",
    run: async (args, seller) => receipts.markFulfilled(seller, String(args.receipt_id)),
  });
