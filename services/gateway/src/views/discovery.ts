import { EVM_NETWORKS, isEvmNetwork } from "@c402/x402";

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

/** The networks this run settles on: live (on-chain, what the live faces quote) and the rehearsal network (simulated). */
export interface Rails {
  live: readonly string[];
  rehearsal: string;
}

/** Whether a CAIP-2 id names a test network (the devchain runs as eip155:84532, a testnet id). */
function isTestnet(network: string): boolean {
  return isEvmNetwork(network) ? EVM_NETWORKS[network].testnet : /:(testnet|devnet)$/.test(network);
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
      // Not served by this deployment yet: null rather than a link that answers 404.
      mcp: null,
      site: siteUrl,
    },
    buying: {
      how: "GET a checkout URL; answer its HTTP 402 by signing one of accepts[] and retrying with PAYMENT-SIGNATURE (or X-PAYMENT). Every checkout has a rehearsal face at /test that settles without real money.",
      faces: { checkout: `${baseUrl}/c/{id}`, rehearsal: `${baseUrl}/c/{id}/test`, receipt: `${baseUrl}/r/{payment_id}` },
      networks: [...new Set([...rails.live, rails.rehearsal])],
      live_networks: [...rails.live],
      rehearsal_network: rails.rehearsal,
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

export function llmsText(serviceName: string, rails: Rails): string {
  const live = rails.live.length
    ? `Live payments settle on-chain on ${rails.live.join(", ")}.`
    : "No live network in this run: the live face of an armed checkout answers 503.";
  return [
    `# ${serviceName}`,
    "",
    "Hosted pay-per-request checkouts on x402. Machine-readable schema: /openapi.json.",
    "",
    "## Networks",
    `${live} Rehearsals settle simulated on ${rails.rehearsal} (no funds move). Asset: USDC.`,
    "GET /health/facilitator -> what each chain family (base, solana, stellar) settles right now.",
    "",
    "## Buy",
    "1. GET /c/{id} -> 402 with PAYMENT-REQUIRED (base64 JSON) and a JSON body with accepts[].",
    "2. Sign an EIP-3009 transferWithAuthorization for accepts[i] (or POST /c/{id}/prepare {payer} for the typed data).",
    "3. GET /c/{id} again with PAYMENT-SIGNATURE: base64 payload -> 200 with the goods and the receipt; PAYMENT-RESPONSE header.",
    "Rehearse free at /c/{id}/test (simulated settlement, no funds).",
    "",
    "## Sell",
    "POST /auth/wallet/challenge {address, network}; sign the message (EIP-191); POST /auth/wallet/verify {message, signature} -> API key.",
    "POST /v1/checkouts {title, price_usd, payload} with Authorization: Bearer <key>.",
    "GET /v1/platform/quote?price_usd=0.10&platform_fee_bps=250 -> buyer_pays, seller_receives, platform_cut, protocol_fee (no key).",
    "",
  ].join("\n");
}

export function docsPage(serviceName: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${serviceName} API</title></head><body><h1>${serviceName} API</h1><p>The machine-readable schema is at <a href="/openapi.json">/openapi.json</a>; a plain-text guide at <a href="/llms.txt">/llms.txt</a>.</p></body></html>`;
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
        { network: rails.rehearsal, asset: "USDC", testnet: isTestnet(rails.rehearsal), settlement: "simulated" as const },
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
