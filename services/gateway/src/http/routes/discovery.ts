import { Router } from "express";
import { openApiDocument } from "../../domain/openapi";
import type { GatewayDeps } from "../deps";

export function discoveryRoutes({ clients, cache, settings }: GatewayDeps): Router {
  const router = Router();
  const { baseUrl, siteUrl, serviceName, version } = settings;

  router.get("/", (_req, res) => {
    res.json({
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
    });
  });

  router.get("/openapi.json", (_req, res) => {
    res.json(openApiDocument(baseUrl, version, serviceName));
  });

  router.get("/llms.txt", (_req, res) => {
    res
      .type("text/plain")
      .send(
        [
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
        ].join("\n"),
      );
  });

  router.get("/docs", (_req, res) => {
    res
      .type("html")
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${serviceName} API</title></head><body><h1>${serviceName} API</h1><p>The machine-readable schema is at <a href="/openapi.json">/openapi.json</a>; a plain-text guide at <a href="/llms.txt">/llms.txt</a>.</p></body></html>`,
      );
  });

  router.get(`/.well-known/${serviceName}`, (_req, res) => {
    res.json({
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
    });
  });

  router.get("/health", async (req, res) => {
    const base = { service: serviceName, version, run_mode: settings.runMode };
    if (!["true", "1"].includes(String(req.query.deep))) {
      res.json({ status: "ok", ...base });
      return;
    }
    // Never raises: every component reports ok or down.
    const components: Record<string, unknown> = {};
    const cacheStarted = Date.now();
    components.cache = await cache.ping().then(
      () => ({ status: "ok", latency_ms: Date.now() - cacheStarted }),
      (err: unknown) => ({ status: "down", detail: err instanceof Error ? err.message : String(err) }),
    );
    await Promise.all(
      Object.entries(clients.health).map(async ([name, client]) => {
        try {
          const r = await client.check({}, { timeoutMs: 3_000 });
          components[name] = {
            status: r.components.every((c) => c.status === "ok") ? "ok" : "down",
            components: Object.fromEntries(
              r.components.map((c) => [c.name, { status: c.status, latency_ms: c.latencyMs, ...(c.detail ? { detail: c.detail } : {}) }]),
            ),
          };
        } catch (err) {
          components[name] = { status: "down", detail: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
    const allOk = Object.values(components).every((c) => (c as { status: string }).status === "ok");
    res.json({ status: allOk ? "ok" : "degraded", ...base, components, ...(settings.healthExtras ?? {}) });
  });

  return router;
}
