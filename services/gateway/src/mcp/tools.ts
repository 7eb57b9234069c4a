import { invalid, ProblemError } from "@c402/problems";
import { isCheckoutId, isId } from "@c402/ids";
import { answered } from "@c402/rpc";
import type { ScopeName } from "@c402/contracts";
import { encodeHeader, signExactEvmPayment } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Request, Response } from "express";
import type { FacePayments } from "../faces/face-payments";
import type { UnpaidAnswers } from "../faces/unpaid";
import type { Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import { CHECKOUT_VALIDATED_NOT_YET_FIELDS, schemas } from "../http/request-schemas";
import type { CheckoutOperations } from "../operations/checkouts";
import { sellerAnalytics } from "../operations/analytics";
import { listMcpTools } from "../operations/mcp-servers";
import type { ReceiptOperations } from "../operations/receipts";
import type { ReportFiling } from "../operations/reports";
import type { EmbedOperations } from "../operations/embed";
import type { ContentOperations } from "../operations/content";
import { createWebhook } from "../operations/webhooks";
import { profileView } from "../views/profile";

/**
 * The tools of POST /mcp. A seller tool runs the same operation as its REST
 * route (same scope, same validation, same object answered); its arguments'
 * schema is the REST body's, adapted where the spec says so. A buyer tool
 * needs no credential. Only tools whose feature works are listed: schedule,
 * escrow and spending tools come with those features.
 */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  /** JSON Schema of `arguments`: what tools/list publishes, and what the endpoint validates them against before `run`. */
  inputSchema: { type: "object"; properties: Record<string, unknown>; required?: readonly string[]; additionalProperties: false };
  /** The scope a seller credential needs; absent: a buyer tool, open to anyone. */
  scope?: ScopeName;
  /** `http`: the /mcp request the call came in (a buyer tool's limits count its client address). */
  run(args: Record<string, unknown>, credential: Credential | undefined, http: { req: Request; res: Response }): Promise<object>;
}

export interface McpToolDeps {
  deps: Pick<GatewayDeps, "clients" | "settings">;
  checkouts: CheckoutOperations;
  receipts: ReceiptOperations;
  unpaid: UnpaidAnswers;
  payments: FacePayments;
  reports: ReportFiling;
  embeds: EmbedOperations;
  content: ContentOperations;
}

const CHECKOUT_ID = { type: "string", minLength: 1, maxLength: 64, description: "The checkout's id (chk_…)." } as const;
const checkoutRef = { type: "object", additionalProperties: false, required: ["checkout_id"], properties: { checkout_id: CHECKOUT_ID } } as const;
const noArguments = { type: "object", additionalProperties: false, properties: {} } as const;
const receiptRef = {
  type: "object",
  additionalProperties: false,
  required: ["receipt_id"],
  properties: { receipt_id: { type: "string", minLength: 1, maxLength: 64, description: "The receipt's id: its payment's (pay_…)." } },
} as const;
const listReceiptsArguments = {
  type: "object",
  additionalProperties: false,
  properties: {
    limit: { type: "integer", minimum: 1, maximum: 200, description: "Items per page (default 50)." },
    cursor: { type: "string", maxLength: 512, description: "next_cursor of the previous page." },
    test_mode: { type: "boolean", description: "true: the rehearsal ledger; false (default): real payments." },
    sold_by: { type: "string", minLength: 1, maxLength: 200, description: "Only sales a platform made for this sub-seller." },
    from: { type: "string", maxLength: 40, description: "Settled at or after (ISO 8601)." },
    to: { type: "string", maxLength: 40, description: "Settled before (ISO 8601)." },
  },
} as const;

const payoutHistoryArguments = {
  type: "object",
  additionalProperties: false,
  properties: {
    limit: listReceiptsArguments.properties.limit,
    cursor: listReceiptsArguments.properties.cursor,
    sold_by: listReceiptsArguments.properties.sold_by,
    from: listReceiptsArguments.properties.from,
    to: listReceiptsArguments.properties.to,
  },
} as const;

const pageArguments = {
  type: "object",
  additionalProperties: false,
  properties: {
    limit: { type: "integer", minimum: 1, maximum: 200, description: "Items per page (default 50)." },
    cursor: { type: "string", maxLength: 512, description: "next_cursor of the previous page." },
  },
} as const;
const analyticsArguments = {
  type: "object",
  additionalProperties: false,
  properties: {
    days: { type: "integer", minimum: 1, maximum: 366, description: "The window: the last this many UTC days, today included (default 30)." },
    test_mode: { type: "boolean", description: "true: rehearsals; false (default): real payments." },
  },
} as const;

const CHECKOUT_REFERENCE = {
  type: "string",
  minLength: 1,
  maxLength: 2048,
  description: "A checkout id (chk_…, or cnt_… for a gated article) or a face URL (…/c/<id>, …/c/<id>/test, …/x/<id>, …/x/<id>/test).",
} as const;
const payTestArguments = {
  type: "object",
  additionalProperties: false,
  required: ["checkout"],
  properties: {
    checkout: CHECKOUT_REFERENCE,
    params: {
      type: "object",
      maxProperties: 50,
      additionalProperties: { type: "string", maxLength: 2000 },
      description: "The call's parameters for a relay or mcp checkout (what a buyer sends as query parameters).",
    },
  },
} as const;

const { receipt_id: reportReceipt, ...reportFields } = schemas.ReportCreate.properties;
const reportArguments = {
  type: "object",
  additionalProperties: false,
  required: ["checkout", ...schemas.ReportCreate.required],
  properties: { checkout: CHECKOUT_REFERENCE, ...reportFields, receipt_id: reportReceipt },
} as const;

/** Tool arguments as the REST query strings they stand for (numbers and booleans as text). */
const asQuery = (args: Record<string, unknown>): Record<string, string> => Object.fromEntries(Object.entries(args).map(([k, v]) => [k, String(v)]));

/**
 * create_checkout's arguments: the REST create body's, but `calls` for
 * `max_deliveries` (still accepted by its older name), `reusable` true unless
 * said otherwise, no `test_mode` (the credential decides the mode), and none of
 * the fields whose feature is not built yet.
 */
function createCheckoutSchema(): McpTool["inputSchema"] {
  const left = new Set<string>(["test_mode", "max_deliveries", ...CHECKOUT_VALIDATED_NOT_YET_FIELDS]);
  const rest = schemas.CheckoutCreate.properties;
  const properties: Record<string, unknown> = Object.fromEntries(Object.entries(rest).filter(([name]) => !left.has(name)));
  properties.reusable = { type: "boolean", description: "true (the default here): a payment link anyone may pay again; false: single-shot." };
  properties.calls = { ...rest.max_deliveries, description: rest.max_deliveries.description };
  properties.max_deliveries = { ...rest.max_deliveries, description: "The older name of calls." };
  return { type: "object", additionalProperties: false, required: [...schemas.CheckoutCreate.required], properties };
}

/**
 * A checkout named by its id or by a face URL (…/c/<id>, …/x/<id>, either
 * with /test): the id and which face. Faces are separate namespaces: a
 * /c/ URL names a chk_ id, a /x/ URL a gated article's cnt_ id.
 */
function checkoutNamed(reference: string): { id: string; face: "live" | "test" } {
  const match = /^(?:(?:https?:\/\/[^/]+)?\/([cx])\/)?([A-Za-z0-9_]+)(\/test)?\/?(?:[?#].*)?$/.exec(reference.trim());
  const [namespace, id] = [match?.[1], match?.[2]];
  const known = id !== undefined && (namespace === "c" ? isId("checkout", id) : namespace === "x" ? isId("contentCheckout", id) : isCheckoutId(id));
  if (!match || id === undefined || !known) {
    throw invalid([{ field: "checkout", reason: "must be a checkout id (chk_…, cnt_…) or its URL (…/c/<id>, …/x/<id>, each optionally with /test)" }]);
  }
  return { id, face: match[3] ? "test" : "live" };
}

const CONTENT_ID = { type: "string", minLength: 1, maxLength: 64, description: "The gated article's id (cnt_…)." } as const;
const contentRef = { type: "object", additionalProperties: false, required: ["checkout_id"], properties: { checkout_id: CONTENT_ID } } as const;
const updateContentArguments = {
  type: "object",
  additionalProperties: false,
  required: ["checkout_id"],
  properties: { checkout_id: CONTENT_ID, ...schemas.CheckoutOfferPatch.properties },
} as const;
const contentGrantArguments = {
  type: "object",
  additionalProperties: false,
  required: ["checkout_id", ...schemas.ContentGrantCreate.required],
  properties: { checkout_id: CONTENT_ID, ...schemas.ContentGrantCreate.properties },
} as const;

export function mcpTools({ deps, checkouts, receipts, unpaid, payments, reports, embeds, content }: McpToolDeps): readonly McpTool[] {
  const seller = (credential: Credential | undefined): Credential => {
    if (!credential) throw new ProblemError("unauthenticated", "This tool needs a seller credential: send Authorization: Bearer <API_KEY or OAuth token>.");
    return credential;
  };
  const createSchema = createCheckoutSchema();
  return [
    {
      name: "whoami",
      title: "Who am I",
      description: "The signed-in seller's profile (as GET /auth/me), and the credential in use: its kind, scope and mode.",
      inputSchema: noArguments,
      scope: "read_only",
      async run(_args, credential) {
        const cred = seller(credential);
        const r = await deps.clients.identity.getProfile({ accountId: cred.accountId });
        return { ...profileView(answered(r.profile, "profile")), credential: { kind: cred.kind, scope: cred.scope, mode: cred.mode } };
      },
    },
    {
      name: "create_checkout",
      title: "Create a checkout",
      description:
        "Creates a checkout (as POST /v1/checkouts) and answers it, with url (the live face) and test_url (the rehearsal face). " +
        "A test key's checkouts rehearse until go_live; a live key's are armed. For an mcp checkout, call list_mcp_tools first so mcp_tool names a tool the server has.",
      inputSchema: createSchema,
      scope: "payments",
      async run(args, credential) {
        const { calls, max_deliveries: olderName, ...rest } = args;
        if (calls !== undefined && olderName !== undefined) {
          throw invalid([{ field: "calls", reason: "is max_deliveries by its newer name: send one of the two" }]);
        }
        const packageCalls = calls ?? olderName;
        const body = { ...rest, reusable: rest.reusable ?? true, ...(packageCalls !== undefined ? { max_deliveries: packageCalls } : {}) };
        return (await checkouts.create(seller(credential), body)).checkout;
      },
    },
    {
      name: "go_live",
      title: "Go live",
      description: "Arms a checkout's live face (as POST /v1/checkouts/{id}/go-live): from then on it settles real payments on-chain.",
      inputSchema: checkoutRef,
      scope: "payments",
      async run(args, credential) {
        const checkout_id = String(args.checkout_id);
        return checkouts.goLive(seller(credential), checkout_id);
      },
    },
    {
      name: "get_content",
      title: "Get a gated article",
      description:
        "One of the seller's gated articles (as GET /v1/content/{id}): the body as written, the full declaration (teaser, byline, pass terms) and its URLs.",
      inputSchema: contentRef,
      scope: "read_only",
      async run(args, credential) {
        return content.get(seller(credential), String(args.checkout_id));
      },
    },
    {
      name: "update_content",
      title: "Update a gated article",
      description:
        "Changes a gated article (as PATCH /v1/checkouts/{id}): payload replaces the body, content replaces the whole declaration, and any offer-card field; live for the next read, pass holders included. Answers as get_content.",
      inputSchema: updateContentArguments,
      scope: "payments",
      async run(args, credential) {
        const { checkout_id, ...patch } = args;
        return content.update(seller(credential), String(checkout_id), patch);
      },
    },
    {
      name: "get_content_snippet",
      title: "Get a gated article's snippet",
      description:
        "What to paste into the seller's own page for a gated article (as GET /x/{id}/snippet): the HTML snippet (teaser and an unlock link), gate_url, teaser, schema.org JSON-LD marking the paid part, and the price.",
      inputSchema: contentRef,
      scope: "read_only",
      async run(args, credential) {
        seller(credential);
        return content.snippet(String(args.checkout_id));
      },
    },
    {
      name: "issue_content_grant",
      title: "Issue a pass",
      description:
        "Issues a pass (as POST /v1/content/{id}/grants) a reader presents as X-Service-Grant (or ?grant=): scope seller (default) opens every article of the account, content this one; ttl_seconds defaults to the article's pass_hours (at most 31 days); uses limits reads. " +
        "subject is recorded (pass.issued), never interpreted. A test key's pass opens rehearsal faces only.",
      inputSchema: contentGrantArguments,
      scope: "payments",
      async run(args, credential) {
        const { checkout_id, ...grant } = args;
        return content.grantForContent(seller(credential), String(checkout_id), grant);
      },
    },
    {
      name: "list_checkouts",
      title: "List checkouts",
      description: "A page of the seller's checkouts, newest first (as GET /v1/checkouts); pass next_cursor as cursor for the next page.",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: {
          limit: { type: "integer", minimum: 1, maximum: 200, description: "Items per page (default 50)." },
          cursor: { type: "string", maxLength: 512, description: "next_cursor of the previous page." },
          include_voided: { type: "boolean", description: "Include voided checkouts (default false)." },
        },
      },
      scope: "read_only",
      async run(args, credential) {
        return checkouts.list(seller(credential), asQuery(args));
      },
    },
    {
      name: "get_checkout",
      title: "Get a checkout",
      description: "One of the seller's checkouts (as GET /v1/checkouts/{id}).",
      inputSchema: checkoutRef,
      scope: "read_only",
      async run(args, credential) {
        const checkout_id = String(args.checkout_id);
        return checkouts.get(seller(credential), checkout_id);
      },
    },
    {
      name: "list_receipts",
      title: "List receipts",
      description: "A page of the seller's receipts ledger, newest first (as GET /v1/receipts): real payments, or the rehearsal ledger with test_mode true.",
      inputSchema: listReceiptsArguments,
      scope: "read_only",
      async run(args, credential) {
        return receipts.list(seller(credential), asQuery(args));
      },
    },
    {
      name: "get_receipt",
      title: "Get a receipt",
      description: "One of the seller's receipts (as GET /v1/receipts/{id}); a payment still settling answers status pending and its transaction hash.",
      inputSchema: receiptRef,
      scope: "read_only",
      async run(args, credential) {
        const receipt_id = String(args.receipt_id);
        return (await receipts.get(seller(credential), receipt_id)).receipt;
      },
    },
    {
      name: "get_payout_history",
      title: "Get payout history",
      description:
        "What reached the seller's payout wallets, newest first: every real sale pays the seller's share straight to pay_to in its own transaction (non-custodial), so each is one payout with its amount, network and tx_hash. Rehearsals are never payouts.",
      inputSchema: payoutHistoryArguments,
      scope: "read_only",
      async run(args, credential) {
        return receipts.payoutHistory(seller(credential), asQuery(args));
      },
    },
    {
      name: "get_embed_settings",
      title: "Get embed settings",
      description: "The origins allowed to frame the seller's pay pages and receipts (as GET /v1/account/embed); none until the seller allowlists one.",
      inputSchema: noArguments,
      scope: "read_only",
      async run(_args, credential) {
        return embeds.get(seller(credential));
      },
    },
    {
      name: "set_embed_settings",
      title: "Set embed settings",
      description:
        "Replaces the origins allowed to frame the seller's pay pages and receipts (as PUT /v1/account/embed): origins only (https://shop.example), https or http on localhost; no wildcards; [] allows none. Needs a full key (or mcp.write).",
      inputSchema: schemas.EmbedSettingsPut,
      scope: "full",
      async run(args, credential) {
        return embeds.put(seller(credential), args);
      },
    },
    {
      name: "list_awaiting_fulfilment",
      title: "List sales awaiting fulfilment",
      description: "Webhook sales the seller has not marked fulfilled yet, newest first (as GET /v1/receipts/awaiting-fulfilment).",
      inputSchema: pageArguments,
      scope: "read_only",
      async run(args, credential) {
        return receipts.awaitingFulfilment(seller(credential), asQuery(args));
      },
    },
    {
      name: "mark_fulfilled",
      title: "Mark a sale fulfilled",
      description: "Closes a webhook sale out once its goods were delivered (as POST /v1/receipts/{id}/fulfilled); again is harmless (already_fulfilled).",
      inputSchema: receiptRef,
      scope: "payments",
      async run(args, credential) {
        const receipt_id = String(args.receipt_id);
        return receipts.markFulfilled(seller(credential), receipt_id);
      },
    },
    {
      name: "get_analytics",
      title: "Get analytics",
      description: "Earnings, buyers, failed deliveries and liabilities over the last days (as GET /v1/analytics).",
      inputSchema: analyticsArguments,
      scope: "read_only",
      async run(args, credential) {
        return sellerAnalytics(deps, seller(credential), asQuery(args));
      },
    },
    {
      name: "create_webhook",
      title: "Create a webhook",
      description:
        "Registers a receiver for the seller's events (as POST /v1/webhooks; default checkout.paid) and answers its signing secret, shown this once. The same url again re-keys it. Needs a full key.",
      inputSchema: schemas.WebhookCreate,
      scope: "full",
      async run(args, credential) {
        return createWebhook(deps, seller(credential), args);
      },
    },
    {
      name: "list_mcp_tools",
      title: "List an MCP server's tools",
      description:
        "What the seller's own MCP server at origin_url offers (as POST /v1/mcp/tools), with the credential it needs; call it before creating an mcp checkout so mcp_tool names a tool the server has. Nothing is stored.",
      inputSchema: schemas.McpToolsRequest,
      scope: "payments",
      async run(args, credential) {
        return listMcpTools(deps, seller(credential), args);
      },
    },
    {
      name: "pay_test_checkout",
      title: "Pay a checkout's rehearsal",
      description:
        "Buys from a checkout's rehearsal face (/c/<id>/test, or /x/<id>/test for a gated article) with a simulated payment, signed here by a throwaway key: no wallet, no funds, nothing moves. " +
        "Answers what the face answers a paid request: the goods (fulfillment) and the receipt; for a gated article also grant, grant_scope and grant_expires_in (a pass that opens rehearsal faces). A live URL is rehearsed too: this tool never pays for real. No credential needed.",
      inputSchema: payTestArguments,
      async run(args) {
        const { checkout, params } = args as { checkout: string; params?: Record<string, string> };
        const { id } = checkoutNamed(checkout);
        const quote = await unpaid.of(id, "test", 2);
        const requirement = quote.required.accepts[0];
        if (!requirement) throw new ProblemError("unavailable", "This checkout's rehearsal face offers no way to pay right now.");
        const payment = await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), requirement, { resourceUrl: quote.required.resource.url });
        const answer = await payments.pay({ checkoutId: id, face: "test", header: encodeHeader(payment), legacy: false, params: params ?? {} });
        if (answer.contentType) {
          const refusal = JSON.parse(String(answer.body)) as { detail?: { message?: string } | string };
          const message = typeof refusal.detail === "string" ? refusal.detail : (refusal.detail?.message ?? "The rehearsal payment was refused.");
          throw new ProblemError("payment-required", message);
        }
        return { http_status: answer.status, ...(answer.body as object) };
      },
    },
    {
      name: "report_checkout",
      title: "Report a checkout",
      description:
        "Tells the seller something went wrong with a checkout (as POST /v1/checkouts/{id}/reports): a category from the closed set, the buyer's words, and the receipt_id of the purchase when there is one. " +
        "A report never refunds; the seller sees it. No credential needed; rate limited per client address (and per receipt).",
      inputSchema: reportArguments,
      async run(args, _credential, http) {
        const { checkout, ...report } = args as { checkout: string } & Record<string, unknown>;
        return reports.file(http.req, http.res, checkoutNamed(checkout).id, report);
      },
    },
    {
      name: "quote_checkout",
      title: "Quote a checkout",
      description:
        "What a checkout costs before paying: its offer (price, fee, total, offer card), the x402 requirements to sign (accepts) and how to pay (endpoint). " +
        "Takes the checkout's id or URL; a …/test URL quotes the rehearsal face. A gated article's (/x/<id>) also carries endpoint.article: teaser, byline, tags and pass terms. No credential needed.",
      inputSchema: {
        type: "object",
        additionalProperties: false,
        required: ["checkout"],
        properties: {
          checkout: CHECKOUT_REFERENCE,
        },
      },
      async run(args) {
        const { checkout } = args as { checkout: string };
        const { id, face } = checkoutNamed(checkout);
        const answer = await unpaid.of(id, face, 2);
        return { checkout_id: id, face, ...answer.body };
      },
    },
  ];
}
