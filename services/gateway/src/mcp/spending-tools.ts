import type { Credential } from "../http/auth";
import { PAY_PARAM_NAME_MAX, PAY_PARAM_VALUE_MAX, PAY_PARAMS_MAX, PAY_URL_MAX, USD_DECIMAL } from "../http/spending-wallet-schemas";
import { refuseTestKey } from "../operations/spending-wallets";
import { SPENDING_CHAINS } from "../views/spending-wallets";
import { asQuery, pageProperties, sellerTool, type McpTool, type McpToolDefinition } from "./tool";

/**
 * The spending tools (spec, MCP endpoint: the Spending row): an agent lists
 * its wallets, reads a balance, its budget and the event log, and pays. They
 * run the /v1/spending-wallets routes' operations, so the service checks the
 * caller as it does for REST. No tool creates a wallet, reveals a key or
 * funds one (spec): those are a signed-in owner's, in the dashboard.
 */

const CHAIN = { type: "string", enum: [...SPENDING_CHAINS], description: "The wallet's chain: base or solana." } as const;

/**
 * A spending tool: every one refuses a test key (403, reason test_key), as
 * the spec's MCP rules say; pay_x402 leaves it to the service, which records
 * the refusal as a `refused` event as it does for REST.
 */
function spendingTool(spec: Parameters<typeof sellerTool>[0] & { refusalRecordedByService?: boolean }): McpTool {
  const { refusalRecordedByService, run, ...tool } = spec;
  return sellerTool({
    ...tool,
    run: async (args, seller: Credential, http) => {
      if (!refusalRecordedByService) refuseTestKey(seller);
      return run(args, seller, http);
    },
  });
}

export const listSpendingWalletsTool: McpToolDefinition = ({ spendingWallets }) =>
  spendingTool({
    name: "list_spending_wallets",
    title: "List spending wallets",
    description: "The account's spending wallets (as GET /v1/spending-wallets): chain, network and address of each; never a secret, never a balance.",
    inputSchema: { type: "object", additionalProperties: false, properties: {} },
    scope: "read_only",
    run: async (_args, seller) => spendingWallets.list(seller),
  });

export const spendingWalletBalanceTool: McpToolDefinition = ({ spendingWallets }) =>
  spendingTool({
    name: "spending_wallet_balance",
    title: "Spending wallet balance",
    description: "What the chain's spending wallet holds (as GET /v1/spending-wallets/{chain}/balance): USDC and the gas coin, read from the chain.",
    inputSchema: { type: "object", additionalProperties: false, required: ["chain"], properties: { chain: CHAIN } },
    scope: "read_only",
    run: async (args, seller) => spendingWallets.balance(seller, String(args.chain)),
  });

export const payX402Tool: McpToolDefinition = ({ spendingWallets }) =>
  spendingTool({
    name: "pay_x402",
    title: "Pay an x402 URL",
    description:
      "Pays an x402 URL from the account's spending wallet (as POST /v1/spending-wallets/{chain}/pay) under the owner's limits (max_usd only lowers the ceiling) and answers {paid, url, receipt, goods, limits}. A live key, an OAuth token or a session; a test key is refused.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      required: ["url"],
      properties: {
        url: { type: "string", minLength: 1, maxLength: PAY_URL_MAX, pattern: "^https?://[^\\s]+$", description: "The x402 URL to pay." },
        max_usd: { type: "string", pattern: USD_DECIMAL, maxLength: 16, description: "The most this payment may cost (a decimal string)." },
        chain: { ...CHAIN, description: "The wallet that pays (default base)." },
        params: {
          type: "object",
          maxProperties: PAY_PARAMS_MAX,
          propertyNames: { minLength: 1, maxLength: PAY_PARAM_NAME_MAX },
          additionalProperties: { type: "string", maxLength: PAY_PARAM_VALUE_MAX },
          description: "Added to the URL's query string.",
        },
      },
    },
    scope: "payments",
    refusalRecordedByService: true,
    run: async ({ chain, ...body }, seller, http) => spendingWallets.pay(seller, chain === undefined ? "base" : String(chain), body, http.res),
  });

export const spendingBudgetTool: McpToolDefinition = ({ spendingWallets }) =>
  spendingTool({
    name: "spending_budget",
    title: "Spending budget",
    description: "The chain's limits (as GET /v1/spending-wallets/{chain}/limits): per_payment_usd, per_day_usd, spent_today_usd, left_today_usd (UTC day).",
    inputSchema: { type: "object", additionalProperties: false, required: ["chain"], properties: { chain: CHAIN } },
    scope: "read_only",
    run: async (args, seller) => spendingWallets.limits(seller, String(args.chain)),
  });

export const spendingWalletEventsTool: McpToolDefinition = ({ spendingWallets }) =>
  spendingTool({
    name: "spending_wallet_events",
    title: "Spending wallet events",
    description:
      "The chain's wallet event log, newest first (as GET /v1/spending-wallets/{chain}/events): created, spent, revealed, flagged, revoked, refused (with reason), each with its actor. Paged.",
    inputSchema: { type: "object", additionalProperties: false, required: ["chain"], properties: { chain: CHAIN, ...pageProperties } },
    scope: "read_only",
    run: async ({ chain, ...paging }, seller) => spendingWallets.events(seller, String(chain), asQuery(paging)),
  });
