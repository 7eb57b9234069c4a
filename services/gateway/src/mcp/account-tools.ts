import { answered } from "@c402/rpc";
import { schemas } from "../http/request-schemas";
import { sellerAnalytics } from "../operations/analytics";
import { createWebhook } from "../operations/webhooks";
import { profileView } from "../views/profile";
import { asQuery, noArguments, sellerTool, type McpToolDefinition } from "./tool";

// The seller's account: who is calling, which sites may frame its pages, its numbers, its webhooks.

export const whoamiTool: McpToolDefinition = ({ deps }) =>
  sellerTool({
    name: "whoami",
    title: "Who am I",
    description: "The signed-in seller's profile (as GET /auth/me), and the credential in use: its kind, scope and mode.",
    inputSchema: noArguments,
    scope: "read_only",
    async run(_args, seller) {
      const r = await deps.clients.identity.getProfile({ accountId: seller.accountId });
      return { ...profileView(answered(r.profile, "profile")), credential: { kind: seller.kind, scope: seller.scope, mode: seller.mode } };
    },
  });

export const getEmbedSettingsTool: McpToolDefinition = ({ embeds }) =>
  sellerTool({
    name: "get_embed_settings",
    title: "Get embed settings",
    description: "The origins allowed to frame the seller's pay pages and receipts (as GET /v1/account/embed); none until the seller allowlists one.",
    inputSchema: noArguments,
    scope: "read_only",
    run: async (_args, seller) => embeds.get(seller),
  });

export const setEmbedSettingsTool: McpToolDefinition = ({ embeds }) =>
  sellerTool({
    name: "set_embed_settings",
    title: "Set embed settings",
    description:
      "Replaces the origins allowed to frame the seller's pay pages and receipts (as PUT /v1/account/embed): origins only (https://shop.example), https or http on localhost; no wildcards; [] allows none. Needs a full key (or mcp.write).",
    inputSchema: schemas.EmbedSettingsPut,
    scope: "full",
    run: async (args, seller) => embeds.put(seller, args),
  });

export const getEscrowSettingsTool: McpToolDefinition = ({ escrowSettings }) =>
  sellerTool({
    name: "get_escrow_settings",
    title: "Get escrow settings",
    description:
      "The seller's escrow settings (as GET /v1/account/escrow): escrow_policy, escrow_default_preset, the arbiters per chain family and the presets' windows. check_balances=true adds each arbiter's readiness to rule (as GET /v1/account/escrow/readiness).",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: { check_balances: { type: "boolean", description: "true: add each arbiter's readiness to rule and the custody note." } },
    },
    scope: "read_only",
    run: async (args, seller) => escrowSettings.get(seller, { checkBalances: args.check_balances === true }),
  });

export const setEscrowSettingsTool: McpToolDefinition = ({ escrowSettings }) =>
  sellerTool({
    name: "set_escrow_settings",
    title: "Set escrow settings",
    description:
      'Changes the seller\'s escrow settings (as PUT /v1/account/escrow): the fields named are set, the others kept. arbiter="payouts" copies the standing payout wallets as the arbiters (a snapshot). Escrow checkouts copy the settings at create. Needs a full key (or mcp.write).',
    inputSchema: schemas.EscrowSettingsPut,
    scope: "full",
    run: async (args, seller) => escrowSettings.put(seller, args),
  });

export const getAnalyticsTool: McpToolDefinition = ({ deps }) =>
  sellerTool({
    name: "get_analytics",
    title: "Get analytics",
    description: "Earnings, buyers, failed deliveries and liabilities over the last days (as GET /v1/analytics).",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: {
        days: { type: "integer", minimum: 1, maximum: 366, description: "The window: the last this many UTC days, today included (default 30)." },
        test_mode: { type: "boolean", description: "true: rehearsals; false (default): real payments." },
      },
    },
    scope: "read_only",
    run: async (args, seller) => sellerAnalytics(deps, seller, asQuery(args)),
  });

export const createWebhookTool: McpToolDefinition = ({ deps }) =>
  sellerTool({
    name: "create_webhook",
    title: "Create a webhook",
    description:
      "Registers a receiver for the seller's events (as POST /v1/webhooks; default checkout.paid) and answers its signing secret, shown this once. The same url again re-keys it. Needs a full key.",
    inputSchema: schemas.WebhookCreate,
    scope: "full",
    run: async (args, seller) => createWebhook(deps, seller, args),
  });
