import { supportedMessage } from "@c402/contracts";
import { BASE_URL, bodyOf, recorded, servers } from "../support/fake-gateway";

/** /, /.well-known/c402 and /llms.txt (routes/discovery.ts): they list only the networks this run settles and routes that answer. */

const serve = servers();

/** payments.facilitatorSupported: `live` networks for the base family, `solana` ones for Solana (none by default), none for Stellar. */
const supported =
  (live: string[], solana: string[] = []) =>
  async ({ family }: { family?: string }) =>
    supportedMessage({
      kinds: (family === "base" ? live : family === "solana" ? solana : []).map((network) => ({ x402Version: 2, scheme: "exact", network })),
      extensions: [],
      signers: {},
    });

async function documents(url: string) {
  const root = await bodyOf(await fetch(`${url}/`));
  const wellKnown = await bodyOf(await fetch(`${url}/.well-known/c402`));
  const llms = await (await fetch(`${url}/llms.txt`)).text();
  return { root, wellKnown, llms };
}

describe("the discovery documents", () => {
  it("name the networks payments settles (the devchain as eip155:84532), never Base mainnet it does not", async () => {
    const { fakes } = recorded({ payments: { facilitatorSupported: supported(["eip155:84532"]) } });
    const { url } = await serve.app(fakes);
    const { root, wellKnown, llms } = await documents(url);
    expect(root.buying).toMatchObject({ networks: ["eip155:84532"], live_networks: ["eip155:84532"], rehearsal_network: "eip155:84532", asset: "USDC" });
    expect(wellKnown.x402.rails).toEqual([
      { network: "eip155:84532", asset: "USDC", testnet: true, settlement: "onchain" },
      { network: "eip155:84532", asset: "USDC", testnet: true, settlement: "simulated" },
    ]);
    expect(wellKnown.capabilities).toEqual({ checkouts: ["inline"], rehearsal: true, live: true });
    expect(llms).toContain("Live payments settle on-chain on eip155:84532.");
    for (const text of [JSON.stringify(root), JSON.stringify(wellKnown), llms]) expect(text).not.toMatch(/eip155:8453(?!2)/);
  });

  it("name Base mainnet when payments settles there", async () => {
    const { fakes } = recorded({ payments: { facilitatorSupported: supported(["eip155:8453"]) } });
    const { url } = await serve.app(fakes);
    const { root, wellKnown } = await documents(url);
    expect(root.buying).toMatchObject({ networks: ["eip155:8453", "eip155:84532"], live_networks: ["eip155:8453"] });
    expect(wellKnown.x402.rails).toEqual([
      { network: "eip155:8453", asset: "USDC", testnet: false, settlement: "onchain" },
      { network: "eip155:84532", asset: "USDC", testnet: true, settlement: "simulated" },
    ]);
  });

  it("name the Solana rehearsal network where Solana settles live: the devnet itself, or the devnet beside mainnet", async () => {
    const devnet = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
    for (const live of [devnet, "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"]) {
      const { fakes } = recorded({ payments: { facilitatorSupported: supported(["eip155:84532"], [live]) } });
      const { url } = await serve.app(fakes);
      const { root, wellKnown, llms } = await documents(url);
      expect(root.buying).toMatchObject({
        live_networks: ["eip155:84532", live],
        rehearsal_network: "eip155:84532",
        rehearsal_networks: ["eip155:84532", devnet],
      });
      expect(wellKnown.x402.rails.filter((r: { settlement: string }) => r.settlement === "simulated")).toEqual([
        { network: "eip155:84532", asset: "USDC", testnet: true, settlement: "simulated" },
        { network: devnet, asset: "USDC", testnet: true, settlement: "simulated" },
      ]);
      expect(llms).toContain(`Rehearsals settle simulated on eip155:84532, ${devnet} (no funds move).`);
    }
  });

  it("without a live network (or before payments ever answered) list the rehearsal network only", async () => {
    for (const payments of [{ facilitatorSupported: supported([]) }, { facilitatorSupported: async () => Promise.reject(new Error("unavailable")) }]) {
      const { fakes } = recorded({ payments });
      const { url } = await serve.app(fakes);
      const res = await fetch(`${url}/`);
      expect(res.status).toBe(200);
      const { root, wellKnown, llms } = await documents(url);
      expect(root.buying).toMatchObject({
        networks: ["eip155:84532"],
        live_networks: [],
        rehearsal_network: "eip155:84532",
        rehearsal_networks: ["eip155:84532"],
      });
      expect(wellKnown.x402.rails).toEqual([{ network: "eip155:84532", asset: "USDC", testnet: true, settlement: "simulated" }]);
      expect(wellKnown.capabilities.live).toBe(false);
      expect(llms).toContain("No live network in this run");
    }
  });

  it("ask payments once for a minute of documents, not once per request", async () => {
    const { fakes, called } = recorded({ payments: { facilitatorSupported: supported(["eip155:84532"]) } });
    const { url } = await serve.app(fakes);
    await documents(url);
    await documents(url);
    expect(called()).toEqual(["payments.facilitatorSupported", "payments.facilitatorSupported", "payments.facilitatorSupported"]);
  });

  it("link no route that answers 404: MCP is linked now that /mcp answers, and so are the new routes", async () => {
    const { fakes } = recorded({ payments: { facilitatorSupported: supported(["eip155:84532"]) } });
    const { url } = await serve.app(fakes);
    const { root, wellKnown, llms } = await documents(url);
    expect(root.links.mcp).toBe(`${BASE_URL}/mcp`);
    expect(Object.keys(root.links).sort()).toEqual(["create", "create_checkout", "join_challenge", "join_verify", "llms", "mcp", "openapi", "site"]);
    expect(root.selling.platform_quote).toBe(`${BASE_URL}/v1/platform/quote`);
    expect(root.health).toEqual({ service: `${BASE_URL}/health`, facilitator: `${BASE_URL}/health/facilitator` });
    expect(wellKnown.links).toMatchObject({ facilitator_health: `${BASE_URL}/health/facilitator`, platform_quote: `${BASE_URL}/v1/platform/quote` });
    // Both MCP routes: the endpoint (POST /mcp) and the listing of a seller's own server (/v1/mcp/tools).
    expect(llms).toContain("POST /mcp");
    expect(llms).toContain("POST /v1/mcp/tools");
    expect(llms).toContain("GET /v1/platform/quote?price_usd=0.10&platform_fee_bps=250");
    expect(llms).toContain("GET /health/facilitator");
    // Every URL of the map and of the well-known document is a route of this app (the faces with an id of their kind).
    const urls = [JSON.stringify(root), JSON.stringify(wellKnown)].flatMap((t) => [...t.matchAll(/"(https:\/\/pay\.test[^"]*)"/g)].map((m) => m[1]!));
    expect(urls.length).toBeGreaterThan(10);
    for (const link of new Set(urls)) {
      const path = link.slice(BASE_URL.length).replace("{id}", "chk_000000000000000000000000").replace("{payment_id}", "pay_000000000000000000000000");
      const res = await fetch(`${url}${path || "/"}`, { redirect: "manual" });
      const body = res.headers.get("content-type")?.includes("json") ? await bodyOf(res) : await res.text();
      // A 404 from a route (no such checkout) names the resource; an unrouted path says "No such endpoint".
      expect([link, JSON.stringify(body)]).not.toEqual([link, expect.stringContaining("No such endpoint")]);
    }
  });

  it("llms.txt tells an agent how to buy (402, sign, retry, rehearsal, prepare, receipts) and how to sell (sign in, keys, create, go live, lifecycle, reports)", async () => {
    const { fakes } = recorded({ payments: { facilitatorSupported: supported(["eip155:84532"]) } });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/llms.txt`);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const llms = await res.text();
    for (const phrase of [
      "## Buy",
      "GET /c/{id} -> 402 Payment Required",
      "PAYMENT-REQUIRED",
      "PAYMENT-SIGNATURE",
      "POST /c/{id}/prepare {payer, network}",
      "GET /c/{id}/test",
      "never charges twice",
      "GET /r/{payment_id}",
      "GET /v1/sellers/{slug}/offers",
      "## Sell",
      "POST /auth/wallet/challenge",
      "POST /auth/wallet/verify",
      "POST /v1/keys",
      "POST /v1/checkouts {title, price_usd, payload}",
      "POST /v1/checkouts/{id}/go-live",
      "DELETE /v1/checkouts/{id}",
      "POST /v1/checkouts/{id}/restore",
      "POST /v1/checkouts/{id}/extend",
      "GET /v1/reports",
      "PATCH /auth/me",
      "/openapi.json",
      "/docs",
    ])
      expect([phrase, llms.includes(phrase)]).toEqual([phrase, true]);
  });
});

describe("/docs", () => {
  it("renders /openapi.json with a viewer served by the gateway itself: the page names only same-origin files, and each answers", async () => {
    const { fakes } = recorded({});
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'self';/);
    expect(csp).toMatch(/connect-src 'self';/);
    const page = await res.text();
    const refs = [...page.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
    expect(refs).toEqual(expect.arrayContaining(["/docs/assets/swagger-ui.css", "/docs/assets/swagger-ui-bundle.js", "/docs/assets/docs.js", "/openapi.json"]));
    // Same origin only: a path on this service, never another host (no CDN) nor a protocol-relative URL.
    for (const ref of refs) expect([ref, /^\/(?!\/)/.test(ref)]).toEqual([ref, true]);
    for (const [asset, type, marker] of [
      ["/docs/assets/swagger-ui.css", /^text\/css/, ".swagger-ui"],
      ["/docs/assets/swagger-ui-bundle.js", /^text\/javascript/, "SwaggerUIBundle"],
      ["/docs/assets/docs.js", /^text\/javascript/, 'url: "/openapi.json"'],
    ] as const) {
      const r = await fetch(`${url}${asset}`);
      expect([asset, r.status]).toEqual([asset, 200]);
      expect(r.headers.get("content-type")).toMatch(type);
      expect(r.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
      expect(await r.text()).toContain(marker);
    }
    // The start-up script asks no validator elsewhere.
    expect(await (await fetch(`${url}/docs/assets/docs.js`)).text()).toContain("validatorUrl: null");
  });

  it("answers 404 for any other file, the package's own files and an escape from the folder included", async () => {
    const { fakes } = recorded({});
    const { url } = await serve.app(fakes);
    for (const path of [
      "/docs/assets/package.json",
      "/docs/assets/index.html",
      "/docs/assets/..%2F..%2Fpackage.json",
      "/docs/assets/swagger-ui.css.map",
      "/docs/assets/toString",
    ]) {
      const res = await fetch(`${url}${path}`);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
  });
});
