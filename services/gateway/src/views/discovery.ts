/** The documents that tell a client what this service is: the root map, llms.txt, /docs, /.well-known/<name>. */

interface Service {
  baseUrl: string;
  siteUrl: string;
  serviceName: string;
  version: string;
}

export function rootView({ baseUrl, siteUrl, serviceName, version }: Service) {
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
      networks: ["eip155:8453", "eip155:84532"],
      asset: "USDC",
    },
    selling: {
      how: "Sign in with a wallet (POST join_challenge, sign, POST join_verify) to get an API key, then POST create_checkout.",
      auth: "Authorization: Bearer <API_KEY>",
      fees: "0.5% of the price plus $0.01, added on top for the buyer",
    },
  };
}

export function llmsText(serviceName: string): string {
  return [
    `# ${serviceName}`,
    "",
    "Hosted pay-per-request checkouts on x402. Machine-readable schema: /openapi.json.",
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
    "",
  ].join("\n");
}

export function docsPage(serviceName: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${serviceName} API</title></head><body><h1>${serviceName} API</h1><p>The machine-readable schema is at <a href="/openapi.json">/openapi.json</a>; a plain-text guide at <a href="/llms.txt">/llms.txt</a>.</p></body></html>`;
}

export function wellKnownView({ baseUrl, serviceName, version }: Omit<Service, "siteUrl">) {
  return {
    name: serviceName,
    version,
    x402: {
      versions: [1, 2],
      schemes: ["exact"],
      rails: [
        { network: "eip155:8453", asset: "USDC" },
        { network: "eip155:84532", asset: "USDC", testnet: true },
      ],
    },
    capabilities: { checkouts: ["inline"], rehearsal: true },
    links: { openapi: `${baseUrl}/openapi.json`, llms: `${baseUrl}/llms.txt`, root: `${baseUrl}/` },
  };
}
