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
import { getContentSnippetTool, getContentTool, issueContentGrantTool, updateContentTool } from "./content-tools";
import { getPayoutHistoryTool, getReceiptTool, listAwaitingFulfilmentTool, listReceiptsTool, markFulfilledTool } from "./receipt-tools";
import type { McpTool, McpToolDeps } from "./tool";

/**
 * The tools of POST /mcp, in the order tools/list names them. Only tools
 * whose feature works are listed: schedule, spending and the other escrow
 * tools come with those features (escrow settings work already).
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
  listAwaitingFulfilmentTool,
  markFulfilledTool,
  getAnalyticsTool,
  createWebhookTool,
  listMcpToolsTool,
  payTestCheckoutTool,
  reportCheckoutTool,
  quoteCheckoutTool,
];

export function mcpTools(ops: McpToolDeps): readonly McpTool[] {
  return TOOLS.map((tool) => tool(ops));
}
