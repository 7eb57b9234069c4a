import { EVM_NETWORKS, isEvmNetwork, isSvmNetwork, SVM_NETWORKS } from "@c402/x402";
import { escapeHtml } from "./html";

/**
 * The documents that tell a client what this service is: the root map,
 * llms.txt, /docs, /.well-known/<name>. They list only what answers in this
 * run: the networks come from what payments settles (Rails), and a route the
 * service does not serve yet (MCP) is not linked.
 */

interface Service {
  baseUrl: string;
  siteUrl: string;
  serviceName: string;
  version: string;
}

/** The networks this run settles on: live (on-chain, what the live faces quote) and the rehearsal networks (simulated), the EVM one first. */
export interface Rails {
  live: readonly string[];
  rehearsal: readonly [string, ...string[]];
}

/** Whether a CAIP-2 id names a test network (the devchain runs as eip155:84532, the local Solana devnet as Solana devnet: test networks both). */
function isTestnet(network: string): boolean {
  if (isEvmNetwork(network)) return EVM_NETWORKS[network].testnet;
  if (isSvmNetwork(network)) return SVM_NETWORKS[network].testnet;
  return /:(testnet|devnet)$/.test(network);
}

export function rootView({ baseUrl, siteUrl, serviceName, version }: Service, rails: Rails) {
  return {
    name: serviceName,
    version,
    status: "ok",
    what: "Hosted pay-per-request checkouts on the x402 protocol: sellers create a checkout, buyers (often agents) pay its URL with a signed USDC payment and get the goods plus a receipt in one round trip.",
    links: {
      openapi: `${baseUrl}/openapi.json`,
      llms: `${baseUrl}/llms.txt`,
      create: `${baseUrl}/v1/checkouts`,
      create_checkout: `${baseUrl}/v1/checkouts`,
      join_challenge: `${baseUrl}/auth/wallet/challenge`,
      join_verify: `${baseUrl}/auth/wallet/verify`,
      mcp: `${baseUrl}/mcp`,
      site: siteUrl,
    },
    buying: {
      how: "GET a checkout URL; answer its HTTP 402 by signing one of accepts[] and retrying with PAYMENT-SIGNATURE (or X-PAYMENT). Every checkout has a rehearsal face at /test that settles without real money.",
      faces: { checkout: `${baseUrl}/c/{id}`, rehearsal: `${baseUrl}/c/{id}/test`, receipt: `${baseUrl}/r/{payment_id}` },
      networks: [...new Set([...rails.live, ...rails.rehearsal])],
      live_networks: [...rails.live],
      rehearsal_network: rails.rehearsal[0],
      rehearsal_networks: [...rails.rehearsal],
      asset: "USDC",
    },
    selling: {
      how: "Sign in with a wallet (POST join_challenge, sign, POST join_verify) to get an API key, then POST create_checkout.",
      auth: "Authorization: Bearer <API_KEY>",
      fees: "0.5% of the price plus $0.01, added on top for the buyer",
      platform_quote: `${baseUrl}/v1/platform/quote`,
    },
    health: { service: `${baseUrl}/health`, facilitator: `${baseUrl}/health/facilitator` },
  };
}

/**
 * /llms.txt: how an agent buys and how a seller sells, naming only routes
 * this run answers (the e2e suite requests every path it names).
 */
export function llmsText(serviceName: string, rails: Rails): string {
  const live = rails.live.length
    ? `Live payments settle on-chain on ${rails.live.join(", ")}.`
    : "No live network in this run: the live face of an armed checkout answers 503.";
  return [
    `# ${serviceName}`,
    "",
    "> Hosted pay-per-request checkouts on the x402 protocol. A buyer (often an agent) requests a checkout URL, gets HTTP 402 with the price, signs a USDC payment and retries the same URL: the goods and a receipt come back in one round trip. Sellers create and manage checkouts over a JSON API, or as tools over MCP (POST /mcp).",
    "",
    `Machine-readable schema: /openapi.json (browsable at /docs). Service map: GET / . Capabilities and rails: /.well-known/${serviceName}`,
    "",
    "## Networks",
    `${live} Rehearsals settle simulated on ${rails.rehearsal.join(", ")} (no funds move). Asset: USDC.`,
    "GET /health/facilitator -> what each chain family (base, solana, stellar) settles right now.",
    "",
    "## Buy (no account and no key: a wallet is enough)",
    "1. GET /c/{id} -> 402 Payment Required: the PAYMENT-REQUIRED header (base64 JSON) and the JSON body carry accepts[] (one way to pay per network), the offer card (title, price_usd, fee_usd, total_usd) and an endpoint block.",
    "2. Sign one of accepts[] as issued. On Base: an EIP-3009 transferWithAuthorization (its amount is the total, fee included); no EIP-712 tooling? POST /c/{id}/prepare {payer, network} -> typed_data and payload_stub (it signs nothing and holds no key). On Solana: a transaction with one USDC transfer of its amount (the price, no fee) to payTo's token account, extra.feePayer as fee payer, as the x402 SVM clients build it. On Stellar: a Soroban authorization entry, signed by the payer, for one USDC transfer(from, payTo, amount) in 7-decimal units, as @x402/stellar builds it (extra.areFeesSponsored: the service submits it and pays the fee).",
    "3. GET /c/{id} again with PAYMENT-SIGNATURE: base64 payload (X-PAYMENT also works) -> 200 with fulfillment.payload (the goods) and the receipt; PAYMENT-RESPONSE header. POST /c/{id}/pay takes the same header for clients that prefer POST.",
    "4. Presenting the same payment again redelivers the same goods and receipt and never charges twice. 202 {status: pending} means the settlement was broadcast: poll its receipt_url, never pay again.",
    "5. Receipts: GET /r/{payment_id} (JSON, or HTML for browsers; public: the unguessable id is the capability); a self-contained file at /r/{payment_id}/download",
    "Rehearse free: every checkout has a rehearsal face, GET /c/{id}/test (with POST /c/{id}/test/prepare and POST /c/{id}/test/pay), that settles simulated payments with no funds; the flow is the same.",
    "Legacy x402 v1 clients: add ?x402_version=1 to a face URL.",
    "Packages (offer.calls_included, endpoint.package): the purchase answers the first call and a package_key, shown once; spend the other calls with GET /c/{id} and Authorization: Bearer <package_key> (60 a minute; a call the seller's origin fails on is given back); GET /c/{id}/usage with the key shows what is left.",
    "Recurring series (402 extra.schedule: periods, each window): POST /c/{id}/prepare {payer} -> period 0's typed_data and schedule[] (one authorization per later period, valid only in its window); sign all, then POST /c/{id}/pay with PAYMENT-SIGNATURE (period 0) and body {schedule: [each held payload]} -> the goods, the receipt and schedule {id, url}; GET /schedule/{id} shows the series and how to cancel it (POST /schedule/{id}/cancel).",
    "Gated articles (cnt_ ids) live at /x/{id} (rehearsal /x/{id}/test): the 402 carries endpoint.article (teaser, byline, tags, pass terms); paying answers the article plus a pass (grant, grant_scope, grant_expires_in). Read it again with X-Service-Grant: <grant> (or ?grant=) until the pass expires.",
    "Find offers: GET /v1/sellers/{slug}/offers -> a seller's catalogue (what sells now: each offer's url, test_url and total_usd); the same as a page at /schedule/{slug}; /u/{slug} answers either (JSON, or the page for browsers), and each relay or mcp offer's call_url (/r/{slug}/{id}) is served as its face",
    "Something wrong? POST /v1/checkouts/{id}/reports {category, detail, receipt_id} (no key). A report never refunds; the seller sees it.",
    "",
    "## Sell",
    "1. Sign in with a wallet: POST /auth/wallet/challenge {address, network}; sign the message (EVM: personal_sign, EIP-191; Stellar, network stellar:pubnet or stellar:testnet: SEP-53 sign message, the signature as hex); POST /auth/wallet/verify {message, signature} -> the account and a fresh API key, shown once (every sign-in mints one: key recovery), plus a 24-hour session. Or by e-mail: POST /auth/magic-link/request {email}; the mailed link (GET /auth/verify?token=, or POST /auth/verify {token}) opens a session and sets the session cookie.",
    "2. Keys: send Authorization: Bearer <key>. Scopes read_only < payments < full; modes test and live. POST /v1/keys {name, scope, mode}; GET /v1/keys; DELETE /v1/keys/{key_id}",
    "3. Create: POST /v1/checkouts {title, price_usd, payload} (optional Idempotency-Key header) -> 201 with url (the live face) and test_url (the rehearsal face). A test key creates a checkout that only rehearses.",
    '4. Go live: POST /v1/checkouts/{id}/go-live arms the live face under the same URL (or create with "test_mode": false).',
    "5. Lifecycle: GET /v1/checkouts; GET /v1/checkouts/{id}; PATCH /v1/checkouts/{id} changes the offer card (price_usd and pay_to never change); DELETE /v1/checkouts/{id} voids it (its faces answer 410, receipts stay); POST /v1/checkouts/{id}/restore; POST /v1/checkouts/{id}/extend {expires_in_minutes} moves the deadline.",
    "6. Reports from buyers: GET /v1/reports; GET /v1/checkouts/{id}/reports; PATCH /v1/reports/{report_id} {status, note} acknowledges or resolves one.",
    "7. Profile and catalogue: PATCH /auth/me {slug, name, bio} (scope full). Armed, open checkouts are then listed at /v1/sellers/{slug}/offers, on the page /schedule/{slug} and in an HTML fragment for your own site, /v1/sellers/{slug}/embed",
    "8. History: GET /v1/account/events lists every change and who made it. POST /auth/logout ends a session.",
    "9. Selling for others (platform mode): PUT /v1/account/platform {platform_account, platform_fee_bps, platform_fee_to} (scope full); GET /v1/account/platform reads it. Checkouts created afterwards name the sub-seller's pay_to and take the cut (a create's own platform_fee_bps wins), paid on-chain to platform_fee_to in the same settlement.",
    "10. Credentials for your own API or MCP server: POST /v1/origin-keys {auth_type: bearer|basic|api_key|custom, value, header_name?, name?} stores one sealed (the value is never shown again); GET /v1/origin-keys; PATCH /v1/origin-keys/{secret_id} {value} rotates; DELETE revokes. POST /v1/mcp/tools {origin_url, origin_auth_secret_id | origin_auth_type + origin_auth_value} lists an MCP server's tools (nothing stored).",
    "11. From an agent: POST /mcp is an MCP server (JSON-RPC, Streamable HTTP, JSON answers, no session). tools/list needs no key; whoami, create_checkout (the create fields, calls for a package), go_live, list_checkouts, get_checkout, list_receipts, get_receipt, get_payout_history, list_awaiting_fulfilment, mark_fulfilled, get_analytics, create_webhook, list_mcp_tools, get_embed_settings, set_embed_settings, get_content, update_content, get_content_snippet and issue_content_grant take Authorization: Bearer <API_KEY> (the scope their REST route needs) or an OAuth token; quote_checkout, pay_test_checkout (a rehearsal purchase, no wallet needed) and report_checkout take none.",
    "12. OAuth (for a client that cannot hold a key): a seller tool without a credential answers 401 with WWW-Authenticate resource_metadata -> GET /.well-known/oauth-protected-resource/mcp -> GET /.well-known/oauth-authorization-server -> POST /oauth/register (RFC 7591) -> the user signs in and allows at GET /oauth/authorize -> POST /oauth/token (authorization code, PKCE S256; refresh tokens rotate). Scopes: mcp.read, mcp.write (/mcp); checkouts.write (REST, the payments rung at most).",
    "13. Gated articles: POST /v1/checkouts with content {teaser, author, published, keywords, pass_scope: seller|content, pass_hours} and the article as payload -> a cnt_ id sold at /x/{id}. GET /v1/content/{id} reads it back; PATCH /v1/checkouts/{id} {payload, content} changes it (live for the next read); GET /x/{id}/snippet is HTML and JSON-LD for your own page; POST /v1/grants {subject, ttl_seconds, uses} and POST /v1/content/{id}/grants {subject, scope, ttl_seconds, uses} issue passes.",
    '14. Escrow settings: GET /v1/account/escrow reads the account\'s escrow_policy (disabled, seller_choice, always), escrow_default_preset (instant, standard, shipping: their windows listed) and arbiters per chain (escrow_arbiter_evm, escrow_arbiter_svm); PUT /v1/account/escrow changes the fields named (scope full), or {arbiter: "payouts"} copies your payout wallets as arbiters (a snapshot); GET /v1/account/escrow/readiness says whether each arbiter can rule. Escrow checkouts copy the settings at create (escrow checkouts themselves are not available on this deployment yet).',
    "Fees: 0.5% of the price plus $0.01, added on top and paid by the buyer.",
    "GET /v1/platform/quote?price_usd=0.10&platform_fee_bps=250 -> buyer_pays, seller_receives, platform_cut, protocol_fee (no key).",
    "",
    "## Errors",
    "RFC 9457 problem documents (application/problem+json): branch on `type` (ends with problems/<slug>). 422 lists errors[] of {field, reason}; 401: no valid key; 403: the key's scope is too low (needed_scope names it); 429 and 503 carry Retry-After.",
    "",
  ].join("\n");
}

/** The viewer's files served under /docs/assets/ (from the swagger-ui-dist package, and our own start-up script). */
export const DOCS_ASSETS = {
  "swagger-ui.css": "text/css",
  "swagger-ui-bundle.js": "text/javascript",
  "docs.js": "text/javascript",
} as const;
export type DocsAsset = keyof typeof DOCS_ASSETS;

/** Starts the viewer on this service's own document; no validator badge (it would call a server elsewhere). */
export const DOCS_SCRIPT = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#docs", deepLinking: true, validatorUrl: null });
});
`;

/**
 * The /docs page: the OpenAPI document rendered by Swagger UI, every file
 * served by this service (nothing from elsewhere, as its CSP says).
 */
export const DOCS_PAGE_HEADERS: readonly (readonly [string, string])[] = [
  [
    "Content-Security-Policy",
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  ],
  ["X-Frame-Options", "DENY"],
];

export function docsPage(serviceName: string): string {
  const name = escapeHtml(serviceName);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${name} API</title><link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><noscript><h1>${name} API</h1><p>The machine-readable schema is at <a href="/openapi.json">/openapi.json</a>; a plain-text guide at <a href="/llms.txt">/llms.txt</a>.</p></noscript>
<div id="docs"></div><script src="/docs/assets/swagger-ui-bundle.js"></script><script src="/docs/assets/docs.js"></script></body></html>`;
}

export function wellKnownView({ baseUrl, serviceName, version }: Omit<Service, "siteUrl">, rails: Rails) {
  return {
    name: serviceName,
    version,
    x402: {
      versions: [1, 2],
      schemes: ["exact"],
      rails: [
        ...rails.live.map((network) => ({ network, asset: "USDC", testnet: isTestnet(network), settlement: "onchain" as const })),
        ...rails.rehearsal.map((network) => ({ network, asset: "USDC", testnet: isTestnet(network), settlement: "simulated" as const })),
      ],
    },
    capabilities: { checkouts: ["inline"], rehearsal: true, live: rails.live.length > 0 },
    links: {
      openapi: `${baseUrl}/openapi.json`,
      llms: `${baseUrl}/llms.txt`,
      root: `${baseUrl}/`,
      facilitator_health: `${baseUrl}/health/facilitator`,
      platform_quote: `${baseUrl}/v1/platform/quote`,
    },
  };
}
