import { validateOpenApiDocument } from "@c402/testkit";
import { baseUrl, call, decoded, newCheckout, newSeller, payRehearsal } from "../src/http";
import { seriesOnceIn, subscribe } from "../src/series";
import { STELLAR_TESTNET } from "../src/stellar";

/**
 * The discovery documents (/, /.well-known/c402, /llms.txt) are honest about
 * this run: the networks they name are the ones the faces quote and the
 * facilitator settles (both local modes settle live on the devchain as
 * eip155:84532, never Base mainnet, and on the local Solana devnet as Solana
 * devnet), and every route they name answers.
 * /health/facilitator and /v1/platform/quote answer. /openapi.json is valid
 * OpenAPI 3.1 and /docs renders it from files this service serves.
 */

/** The devchain's CAIP-2 id in both local modes (docs/decisions.md, "Live networks locally"). */
const DEVCHAIN = "eip155:84532";
/** The local Solana devnet's CAIP-2 id in both local modes (it presents itself as Solana devnet). */
const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

let unarmed: { id: string };
let armed: { id: string };
let article: { id: string };
let paymentId: string;
let slug: string;
let scheduleId: string;

beforeAll(async () => {
  const seller = await newSeller();
  // A public slug, for the seller catalogue's paths ({slug}) the documents name.
  slug = `docs-${Date.now().toString(36)}`;
  if ((await call("PATCH", "/auth/me", { key: seller.key, body: { slug } })).status !== 200) throw new Error("could not take a slug");
  unarmed = await newCheckout(seller.key, { reusable: true });
  armed = await newCheckout(seller.key, { test_mode: false });
  article = await newCheckout(seller.key, { payload: "<p>An article.</p>", content: {} });
  // A rehearsal payment, for a receipt id to fill /r/{payment_id} with (simulated: nothing moves).
  paymentId = (await payRehearsal(unarmed.id)).body.receipt.id;
  // A rehearsal series (its periods a month apart), for the buyer view's /schedule/{id}.
  const series = await newCheckout(seller.key, { schedule_interval_days: 30, schedule_periods: 2, reusable: true });
  scheduleId = (await subscribe(`/c/${series.id}/test`)).paid.body.schedule.id as string;
  await seriesOnceIn(seller.key, scheduleId, () => true);
});

/** A path a document names, with its placeholders filled with real ids of this run (a gated article's under /x/). */
const filled = (path: string) =>
  path
    .replaceAll("{id}", path.startsWith("/x/") ? article.id : path.startsWith("/schedule/") ? scheduleId : unarmed.id)
    .replaceAll("{payment_id}", paymentId)
    .replaceAll("{slug}", slug);

describe("the discovery documents name only what this run serves", () => {
  it("they list the devchain, Solana devnet and Stellar stand-in networks the faces quote and the facilitator settles, and never Base mainnet", async () => {
    if (process.env.E2E_RUN_MODE === "embedded") {
      // Embedded mode says which networks its devchain and Solana devnet run as.
      const health = (await call("GET", "/health?deep=true")).body;
      expect(health.devchain.network).toBe(DEVCHAIN);
      expect(health.solana_devnet.network).toBe(SOLANA_DEVNET);
    }
    const root = (await call("GET", "/")).body;
    const wellKnown = (await call("GET", "/.well-known/c402")).body;
    const llms = (await call("GET", "/llms.txt")).text;
    const kindsOf = async (family: string) => (await call("GET", `/x402/${family}/supported`)).body.kinds;
    const supported = { kinds: [...(await kindsOf("base")), ...(await kindsOf("solana")), ...(await kindsOf("stellar"))] };

    expect(root.buying).toMatchObject({
      networks: [DEVCHAIN, SOLANA_DEVNET, STELLAR_TESTNET],
      live_networks: [DEVCHAIN, SOLANA_DEVNET, STELLAR_TESTNET],
      rehearsal_network: DEVCHAIN,
      rehearsal_networks: [DEVCHAIN, SOLANA_DEVNET, STELLAR_TESTNET],
    });
    expect(wellKnown.x402.rails).toEqual([
      { network: DEVCHAIN, asset: "USDC", testnet: true, settlement: "onchain" },
      { network: SOLANA_DEVNET, asset: "USDC", testnet: true, settlement: "onchain" },
      { network: STELLAR_TESTNET, asset: "USDC", testnet: true, settlement: "onchain" },
      { network: DEVCHAIN, asset: "USDC", testnet: true, settlement: "simulated" },
      { network: SOLANA_DEVNET, asset: "USDC", testnet: true, settlement: "simulated" },
      { network: STELLAR_TESTNET, asset: "USDC", testnet: true, settlement: "simulated" },
    ]);
    expect(llms).toContain(`Live payments settle on-chain on ${DEVCHAIN}, ${SOLANA_DEVNET}, ${STELLAR_TESTNET}.`);
    for (const text of [JSON.stringify(root), JSON.stringify(wellKnown), llms]) expect(text).not.toMatch(/eip155:8453(?!2)/);

    // The same networks as the facilitator's kinds and the faces' requirements.
    expect([...new Set(supported.kinds.map((k: { network: string }) => k.network))]).toEqual(root.buying.live_networks);
    const live = decoded((await call("GET", `/c/${armed.id}`)).headers.get("payment-required"));
    expect(live.accepts.length).toBeGreaterThan(0);
    for (const a of live.accepts) expect(root.buying.live_networks).toContain(a.network);
    const rehearsal = decoded((await call("GET", `/c/${unarmed.id}/test`)).headers.get("payment-required"));
    expect(rehearsal.accepts.map((a: { network: string }) => a.network)).toEqual([root.buying.rehearsal_network]);
  });

  it("every route the root map, the well-known document and llms.txt name answers (none is 404), POST /mcp among them", async () => {
    const root = (await call("GET", "/")).body;
    const wellKnown = (await call("GET", "/.well-known/c402")).body;
    const llms = (await call("GET", "/llms.txt")).text;
    expect(root.links.mcp).toBe(`${baseUrl()}/mcp`);
    expect(llms).toContain("POST /mcp");

    const urls = [JSON.stringify(root), JSON.stringify(wellKnown)].flatMap((t) => [...t.matchAll(/"(https?:\/\/[^"]+)"/g)].map((m) => m[1]!));
    // Only the site link may point elsewhere (SITE_URL); nothing outside this run is called.
    const ours = urls.filter((u) => u.startsWith(baseUrl()));
    expect(urls.filter((u) => !u.startsWith(baseUrl())).every((u) => u === root.links.site)).toBe(true);
    const paths = [
      ...ours.map((u) => u.slice(baseUrl().length) || "/"),
      // llms.txt: every token that is a path (trailing punctuation dropped).
      ...[...llms.matchAll(/(?:^|\s)(\/[A-Za-z0-9_{}./?=&-]*)/g)].map((m) => m[1]!.replace(/[.,]+$/, "")),
    ];
    expect(paths).toEqual(
      expect.arrayContaining(["/v1/platform/quote", "/health/facilitator", "/c/{id}", "/c/{id}/test", "/r/{payment_id}", "/v1/sellers/{slug}/offers", "/docs"]),
    );
    const answers: [string, number][] = [];
    for (const path of new Set(paths)) answers.push([path, (await call("GET", filled(path))).status]);
    // A POST-only route answers GET with 405, which is an answer: the route exists.
    expect(answers.filter(([, status]) => status === 404)).toEqual([]);
  });

  it("GET /health/facilitator answers every family in one shape: base live on the devchain, Solana live on the devnet, Stellar live on the stand-in", async () => {
    const r = await call("GET", "/health/facilitator");
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.body).toEqual({
      status: "ok",
      checked_at: expect.any(String),
      chains: {
        base: { networks: [DEVCHAIN], available: true, settles: "live", reason: null },
        solana: { networks: [SOLANA_DEVNET], available: true, settles: "live", reason: null },
        stellar: { networks: [STELLAR_TESTNET], available: true, settles: "live", reason: null },
      },
    });
  });

  it("GET /v1/platform/quote answers the split of the spec's example price, and 422 naming platform_fee_bps above 2000", async () => {
    const r = await call("GET", "/v1/platform/quote?price_usd=0.10&platform_fee_bps=250");
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
    expect(r.body).toEqual({
      price_usd: "0.100000",
      platform_fee_bps: 250,
      buyer_pays: "0.110500",
      seller_receives: "0.097500",
      platform_cut: "0.002500",
      protocol_fee: "0.010500",
    });
    const refused = await call("GET", "/v1/platform/quote?price_usd=0.10&platform_fee_bps=2001");
    expect(refused.status).toBe(422);
    expect(refused.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(refused.body.errors).toEqual([{ field: "platform_fee_bps", reason: "must be an integer from 0 to 2000" }]);
  });

  it("llms.txt tells an agent how to buy and how to sell, in this run's words", async () => {
    const llms = (await call("GET", "/llms.txt")).text;
    for (const phrase of [
      "GET /c/{id} -> 402 Payment Required",
      "PAYMENT-SIGNATURE",
      "POST /c/{id}/prepare",
      "Rehearse free",
      "GET /r/{payment_id}",
      "POST /auth/wallet/verify",
      "POST /v1/keys",
      "POST /v1/checkouts {title, price_usd, payload}",
      "POST /v1/checkouts/{id}/go-live",
      "DELETE /v1/checkouts/{id}",
      "GET /v1/reports",
      "GET /v1/sellers/{slug}/offers",
    ])
      expect([phrase, llms.includes(phrase)]).toEqual([phrase, true]);
  });

  it("/openapi.json as served is valid OpenAPI 3.1, every operation with a unique operationId", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    expect(validateOpenApiDocument(doc)).toMatchObject({ valid: true, version: "3.1", errors: null });
    const ids = Object.values<Record<string, { operationId?: string }>>(doc.paths).flatMap((item) =>
      ["get", "put", "post", "delete", "patch"].filter((m) => item[m]).map((m) => item[m]!.operationId),
    );
    expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("/docs renders the document with a viewer this service serves: every file the page names is same-origin and answers", async () => {
    const page = await call("GET", "/docs", { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'; script-src 'self';/);
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      expect([ref, /^\/(?!\/)/.test(ref)]).toEqual([ref, true]);
      const r = await call("GET", ref, { headers: { accept: "*/*" } });
      expect([ref, r.status]).toEqual([ref, 200]);
    }
  });
});
