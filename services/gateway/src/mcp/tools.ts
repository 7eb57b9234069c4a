import {
  createWebhookTool,
  getAnalyticsTool,
  getEmbedSettingsTool,
  getEscrowSettingsTool,
  setEmbedSettingsTool,
  setEscrowSettingsTool,
  whoamiTool,
} from "./account-tools";
import { payTestCheckoutTool, quoteCheckoutTool, reportCheckoutTool } from "./buyer-tools";
import { createCheckoutTool, getCheckoutTool, goLiveTool, listCheckoutsTool, listMcpToolsTool } from "./checkout-tools";
import { escrowActionTool, escrowSubmitTool, getEscrowTool, listEscrowsTool, resolveEscrowSubmitTool, resolveEscrowTool } from "./escrow-tools";
import { getContentSnippetTool, getContentTool, issueContentGrantTool, updateContentTool } from "./content-tools";
import { getPayoutHistoryTool, getReceiptTool, listAwaitingFulfilmentTool, listReceiptsTool, markFulfilledTool } from "./receipt-tools";
import { cancelScheduleTool, getScheduleTool, listSchedulesTool } from "./schedule-tools";
import { listSpendingWalletsTool, payX402Tool, spendingBudgetTool, spendingWalletBalanceTool, spendingWalletEventsTool } from "./spending-tools";
import type { McpTool, McpToolDeps } from "./tool";

/**
 * The tools of POST /mcp, in the order tools/list names them. Only tools
 * whose feature works are listed.
 */
const TOOLS = [
  whoamiTool,
  createCheckoutTool,
  goLiveTool,
  getContentTool,
  updateContentTool,
  getContentSnippetTool,
  issueContentGrantTool,
  listCheckoutsTool,
  getCheckoutTool,
  listReceiptsTool,
  getReceiptTool,
  getPayoutHistoryTool,
  getEmbedSettingsTool,
  setEmbedSettingsTool,
  getEscrowSettingsTool,
  setEscrowSettingsTool,
  listEscrowsTool,
  getEscrowTool,
  resolveEscrowTool,
  resolveEscrowSubmitTool,
  listSchedulesTool,
  getScheduleTool,
  cancelScheduleTool,
  listAwaitingFulfilmentTool,
  markFulfilledTool,
  getAnalyticsTool,
  createWebhookTool,
  listMcpToolsTool,
  listSpendingWalletsTool,
  spendingWalletBalanceTool,
  spendingBudgetTool,
  spendingWalletEventsTool,
  payX402Tool,
  payTestCheckoutTool,
  reportCheckoutTool,
  quoteCheckoutTool,
  escrowActionTool,
  escrowSubmitTool,
];

export function mcpTools(ops: McpToolDeps): readonly McpTool[] {
  return TOOLS.map((tool) => tool(ops));
}
