import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import fc from "fast-check";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startFakeOrigin } from "@c402/testkit/fake-origin";
import { devchainWallets } from "../src/devchain";
import { baseUrl, call, decoded, newCheckout, newSeller, payRehearsal, walletSession } from "../src/http";

/**
 * Gated content (spec, Gated content; Grant; Authentication item 10): a
 * checkout with a `content` declaration is an article (cnt_, face /x/{id}).
 * Without a pass a reader gets the 402 (endpoint.article) or the wall; the
 * official x402 client buys it and gets the article plus a pass; the pass
 * reads it again until it expires, within its scope, its seller and its uses.
 */

const SECRET = "The butler did it, with the candlestick.";
const ARTICLE = `<h2>Chapter one</h2><p>It was a dark and stormy night in the old manor, and every guest had a reason to lie. ${SECRET}</p>`;

async function newArticle(key: string, body: Record<string, unknown> = {}, content: Record<string, unknown> = {}) {
  return newCheckout(key, {
    title: "The manor mystery",
    price_usd: "0.25",
    payload: ARTICLE,
    reusable: true,
    content: { author: "A. Writer", published: "2026-11-01", keywords: ["mystery", "fiction"], ...content },
    ...body,
  });
}

const read = (path: string, grant: string, headers: Record<string, string> = {}) => call("GET", path, { headers: { "X-Service-Grant": grant, ...headers } });

async function mcp(key: string | undefined, name: string, args: Record<string, unknown> = {}) {
  const r = await call("POST", "/mcp", { ...(key ? { key } : {}), body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } } });
  return r.body as { result?: { structuredContent: any; isError?: boolean }; error?: { code: number; data: any } };
}

describe("gated content", () => {
  it("creates an article: cnt_ id at /x/, the declaration normalized, read back whole by its owner only", async () => {
    const seller = await newSeller();
    const a = await newArticle(seller.key, {}, { canonical_url: "https://blog.example/manor" });
    expect(a.id).toMatch(/^cnt_[0-9A-Za-z]{24}$/);
    expect(a.url).toBe(`${baseUrl()}/x/${a.id}`);
    expect(a.test_url).toBe(`${baseUrl()}/x/${a.id}/test`);
    const declaration = {
      teaser: null,
      author: "A. Writer",
      published: "2026-11-01",
      canonical_url: "https://blog.example/manor",
      keywords: ["mystery", "fiction"],
      section: null,
      language: null,
      license_url: null,
      pass_scope: "seller",
      pass_hours: 24,
    };
    expect(a.content).toEqual(declaration);
    expect((await call("GET", `/v1/checkouts/${a.id}`, { key: seller.key })).body.content).toEqual(declaration);

    const own = await call("GET", `/v1/content/${a.id}`, { key: seller.key });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id: a.id, object: "content", body: ARTICLE, content: declaration, url: a.url, snippet_url: `${a.url}/snippet` });
    // The teaser falls back to the opening of the body, never the whole of it.
    expect(own.body.teaser).toMatch(/^Chapter one It was a dark.*…$/);
    expect(own.body.teaser).not.toContain("candlestick");

    const other = await newSeller();
    expect((await call("GET", `/v1/content/${a.id}`, { key: other.key })).status).toBe(404);
    const plain = await newCheckout(seller.key);
    expect((await call("GET", `/v1/content/${plain.id}`, { key: seller.key })).status).toBe(404);
    expect((await call("GET", `/v1/content/${a.id}`)).status).toBe(401);
  });

  it("refuses what an article cannot be, naming each field; escrow with content is the spec's 400", async () => {
    const seller = await newSeller();
    const refused = async (body: Record<string, unknown>, content: Record<string, unknown> = {}) => {
      const r = await call("POST", "/v1/checkouts", {
        key: seller.key,
        body: { title: "x", price_usd: "0.10", payload: "text", ...body, content: { ...content } },
      });
      return { status: r.status, fields: (r.body.errors ?? []).map((e: { field: string }) => e.field) };
    };
    expect(await refused({}, { colour: "red" })).toEqual({ status: 422, fields: ["content.colour"] });
    expect(await refused({}, { published: "yesterday", language: "not a tag", canonical_url: "http://blog.example/a" })).toEqual({
      status: 422,
      fields: ["content.published", "content.language", "content.canonical_url"],
    });
    expect((await refused({}, { pass_hours: 9000 })).status).toBe(422);
    expect(await refused({ fulfillment: "webhook" })).toMatchObject({ status: 422, fields: expect.arrayContaining(["fulfillment"]) });
    expect(await refused({ payload: null })).toMatchObject({ status: 422, fields: ["payload"] });
    // A relay article's origin serves it: no payload beside it; an mcp one is no article.
    expect(await refused({ origin_url: "https://origin.example/a" })).toMatchObject({ status: 422, fields: ["payload"] });
    expect(await refused({ payload: undefined, mcp_tool: "read", origin_url: "https://origin.example/mcp" })).toMatchObject({
      status: 422,
      fields: ["fulfillment"],
    });
    const both = await call("POST", "/v1/checkouts", {
      key: seller.key,
      body: { title: "x", price_usd: "0.10", payload: "t", content: {}, escrow_offer: "optional" },
    });
    expect(both.status).toBe(400);
    expect(both.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("a canonical URL names one site: a wildcard is refused (create and PATCH); the wall and the article may be framed by that origin only", async () => {
    const seller = await newSeller();
    const fields = (r: { body: { errors?: { field: string }[] } }) => (r.body.errors ?? []).map((e) => e.field);
    const created = await call("POST", "/v1/checkouts", {
      key: seller.key,
      body: { title: "x", price_usd: "0.10", payload: "text", content: { canonical_url: "https://*/" } },
    });
    expect([created.status, fields(created)]).toEqual([422, ["content.canonical_url"]]);

    const a = await newArticle(seller.key, {}, { canonical_url: "https://blog.example/manor" });
    const patched = await call("PATCH", `/v1/checkouts/${a.id}`, { key: seller.key, body: { content: { canonical_url: "https://*.example.com/x" } } });
    expect([patched.status, fields(patched)]).toEqual([422, ["content.canonical_url"]]);
    expect((await call("GET", `/v1/checkouts/${a.id}`, { key: seller.key })).body.content.canonical_url).toBe("https://blog.example/manor");

    const frameAncestors = (csp: string | null) => /(?:^|;\s*)frame-ancestors ([^;]*)/.exec(csp ?? "")?.[1];
    const wall = await call("GET", `/x/${a.id}`, { headers: { accept: "text/html" } });
    expect(wall.status).toBe(402);
    expect(frameAncestors(wall.headers.get("content-security-policy"))).toBe("https://blog.example");
    expect(wall.headers.get("content-security-policy")).not.toContain("*");

    const { grant } = (await payRehearsal(a.id)).body;
    const paid = await read(`/x/${a.id}/test`, grant);
    expect(paid.status).toBe(200);
    expect(paid.text).toContain(SECRET);
    expect(frameAncestors(paid.headers.get("content-security-policy"))).toBe("https://blog.example");
    expect(paid.headers.get("content-security-policy")).not.toContain("*");
  });

  it("keeps the faces apart: a cnt_ id is 404 at /c/, a chk_ id is 404 at /x/", async () => {
    const seller = await newSeller();
    const a = await newArticle(seller.key);
    const plain = await newCheckout(seller.key);
    expect((await call("GET", `/c/${a.id}`)).status).toBe(404);
    expect((await call("GET", `/c/${a.id}/test`)).status).toBe(404);
    expect((await call("GET", `/x/${plain.id}`)).status).toBe(404);
    expect((await call("POST", `/x/${plain.id}/test/prepare`, { body: { payer: seller.wallet.address } })).status).toBe(404);
    expect((await call("GET", `/x/${plain.id}/snippet`)).status).toBe(404);
  });

  it("without a pass: a 402 with endpoint.article and never the body; a browser gets the wall; never cacheable", async () => {
    const seller = await newSeller();
    const a = await newArticle(
      seller.key,
      { description: "A country-house whodunit." },
      { teaser: "Who killed the colonel?", section: "Fiction", language: "en-GB" },
    );
    const r = await call("GET", `/x/${a.id}`);
    expect(r.status).toBe(402);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.text).not.toContain("candlestick");
    expect(r.body.accepts[0].resource).toBe(`${baseUrl()}/x/${a.id}`);
    expect(decoded(r.headers.get("payment-required")).resource.url).toBe(`${baseUrl()}/x/${a.id}`);
    expect(r.body.endpoint.prepare ?? r.body.endpoint.pay.prepare).toBe(`${baseUrl()}/x/${a.id}/prepare`);
    expect(r.body.endpoint.article).toEqual({
      teaser: "Who killed the colonel?",
      byline: { author: "A. Writer", published: "2026-11-01" },
      tags: ["mystery", "fiction"],
      section: "Fiction",
      language: "en-GB",
      canonical_url: null,
      license_url: null,
      pass: expect.objectContaining({ scope: "seller", hours: 24, header: "X-Service-Grant", query: "grant" }),
    });
    const test = await call("GET", `/x/${a.id}/test`);
    expect(test.body.accepts[0].resource).toBe(`${baseUrl()}/x/${a.id}/test`);

    const wall = await call("GET", `/x/${a.id}`, { headers: { accept: "text/html" } });
    expect(wall.status).toBe(402);
    expect(wall.headers.get("content-type")).toMatch(/^text\/html/);
    expect(wall.headers.get("cache-control")).toBe("no-store");
    expect(wall.text).toContain("Who killed the colonel?");
    expect(wall.text).not.toContain("candlestick");
  });

  it("the official x402 client buys the rehearsal: article, receipt and a pass that reads it again", async () => {
    const seller = await newSeller();
    const a = await newArticle(seller.key);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(generatePrivateKey()) });
    const res = await wrapFetchWithPayment(fetch, client)(`${baseUrl()}/x/${a.id}/test`, { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    const paid = (await res.json()) as Record<string, any>;
    expect(paid.fulfillment).toEqual({ mode: "inline", payload: ARTICLE });
    expect(paid.receipt).toMatchObject({ checkout_id: a.id, test_mode: true });
    expect(paid).toMatchObject({ grant: expect.stringMatching(/^gp1\./), grant_scope: "seller" });
    expect(paid.grant_expires_in).toBeGreaterThan(86_390);
    expect(paid.grant_expires_in).toBeLessThanOrEqual(86_400);

    for (const path of [`/x/${a.id}/test`, `/x/${a.id}`, `/x/${a.id}?grant=${encodeURIComponent(paid.grant)}`]) {
      const r = path.includes("grant=") ? await call("GET", path) : await read(path, paid.grant);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toMatch(/^text\/html/);
      expect(r.headers.get("cache-control")).toBe("no-store");
      expect(r.text).toContain(`<article class="c402-paid">${ARTICLE}</article>`);
      // The seller's HTML runs sandboxed: no script, an opaque origin.
      expect(r.headers.get("content-security-policy")).toMatch(/^sandbox /);
      expect(r.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    }

    // Once the seller goes live, a rehearsal's pass opens the rehearsal face only.
    expect((await call("POST", `/v1/checkouts/${a.id}/go-live`, { key: seller.key })).status).toBe(200);
    const live = await read(`/x/${a.id}`, paid.grant);
    expect(live.status).toBe(402);
    expect(live.headers.get("x-service-grant-refused")).toBe("rehearsal_pass");
    expect(live.body.grant_refused).toMatchObject({ reason: "rehearsal_pass" });
    expect(live.text).not.toContain("candlestick");
    expect((await read(`/x/${a.id}/test`, paid.grant)).status).toBe(200);

    // The same payment again redelivers (never charges twice) with a pass that ends when the first does.
    expect((await call("POST", `/x/${a.id}/test/prepare`, { body: { payer: seller.wallet.address } })).body.pay_url).toBe(`${baseUrl()}/x/${a.id}/test`);
  });

  it("meters an armed article's rehearsal face by test_delivery_daily_cap: purchase and pass reads count; past it 429 with the live URL and no body", async () => {
    const seller = await newSeller();
    const a = await newArticle(seller.key, { test_delivery_daily_cap: 3 });
    expect((await call("POST", `/v1/checkouts/${a.id}/go-live`, { key: seller.key })).status).toBe(200);
    const untilTomorrow = Math.ceil((Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now()) / 1000);
    // A simulated payment from an empty wallet: the purchase answers the article, counted (2 of 3 left).
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(generatePrivateKey()) });
    const bought = await wrapFetchWithPayment(fetch, client)(`${baseUrl()}/x/${a.id}/test`, { headers: { accept: "application/json" } });
    expect([bought.status, bought.headers.get("x-ratelimit-limit"), bought.headers.get("x-ratelimit-remaining")]).toEqual([200, "3", "2"]);
    expect(Math.abs(Number(bought.headers.get("x-ratelimit-reset")) - untilTomorrow)).toBeLessThan(60);
    const { grant } = (await bought.json()) as { grant: string };
    // Each read with the rehearsal pass is a delivery too.
    const reads = [await read(`/x/${a.id}/test`, grant), await read(`/x/${a.id}/test`, grant)];
    expect(reads.map((r) => [r.status, r.headers.get("x-ratelimit-remaining")])).toEqual([
      [200, "1"],
      [200, "0"],
    ]);
    const over = await read(`/x/${a.id}/test`, grant);
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ reason: "test_delivery_daily_cap", live_url: `${baseUrl()}/x/${a.id}`, charged: false });
    expect(Math.abs(Number(over.headers.get("retry-after")) - untilTomorrow)).toBeLessThan(60);
    expect(over.text).not.toContain("candlestick");
    // A purchase past the cap is refused before anything is recorded: no body, no pass, no second rehearsal receipt.
    const again = new x402Client();
    registerExactEvmScheme(again, { signer: privateKeyToAccount(generatePrivateKey()) });
    const refused = await wrapFetchWithPayment(fetch, again)(`${baseUrl()}/x/${a.id}/test`, { headers: { accept: "application/json" } });
    expect(refused.status).toBe(429);
    expect(await refused.text()).not.toContain("candlestick");
    const receipts = (await call("GET", "/v1/receipts?test_mode=true", { key: seller.key })).body.receipts as { checkout_id: string }[];
    expect(receipts.filter((r) => r.checkout_id === a.id)).toHaveLength(1);
    // An agent's rehearsal purchase over MCP is the same delivery: refused past the cap.
    const overMcp = await mcp(undefined, "pay_test_checkout", { checkout: `${baseUrl()}/x/${a.id}` });
    expect(overMcp.error?.data?.status ?? overMcp.result?.structuredContent?.status).toBe(429);
    expect(JSON.stringify(overMcp)).not.toContain("candlestick");
    // A seller's own test pass is metered the same way on the rehearsal face.
    const issued = (await call("POST", `/v1/content/${a.id}/grants`, { key: seller.key, body: { subject: "qa", uses: 1 } })).body.grant as string;
    expect((await read(`/x/${a.id}/test`, issued)).status).toBe(429);
  });

  it("a pass opens within its seller and scope only, and a forged or altered one opens nothing", async () => {
    const seller = await newSeller();
    const first = await newArticle(seller.key);
    const second = await newArticle(seller.key, { title: "Sequel" }, { pass_scope: "content" });
    const stranger = await newArticle((await newSeller()).key);

    const sellerWide = (await payRehearsal(first.id)).body;
    expect(sellerWide.grant_scope).toBe("seller");
    expect((await read(`/x/${second.id}/test`, sellerWide.grant)).status).toBe(200);
    const foreign = await read(`/x/${stranger.id}/test`, sellerWide.grant);
    expect([foreign.status, foreign.body.grant_refused?.reason]).toEqual([402, "other_seller"]);

    const narrow = (await payRehearsal(second.id)).body;
    expect(narrow.grant_scope).toBe("content");
    expect((await read(`/x/${second.id}/test`, narrow.grant)).status).toBe(200);
    const elsewhere = await read(`/x/${first.id}/test`, narrow.grant);
    expect([elsewhere.status, elsewhere.body.grant_refused?.reason]).toEqual([402, "other_content"]);

    const [prefix, keyId, claims, tag] = sellerWide.grant.split(".");
    const widened = JSON.parse(Buffer.from(claims, "base64url").toString());
    widened.exp += 86_400 * 365;
    const altered = [prefix, keyId, Buffer.from(JSON.stringify(widened)).toString("base64url"), tag].join(".");
    expect((await read(`/x/${first.id}/test`, altered)).body.grant_refused?.reason).toBe("signature");
    expect((await read(`/x/${first.id}/test`, "not-a-pass")).body.grant_refused?.reason).toBe("malformed");
    expect((await read(`/x/${first.id}/test`, "x".repeat(5000))).status).toBe(402);
  });

  it("a seller issues passes: recorded with their subject, limited in uses and time; a chk_ id is 404", async () => {
    const seller = await newSeller();
    const live = (await call("POST", "/v1/keys", { key: await walletSession(seller.wallet), body: { scope: "payments", mode: "live" } })).body.secret as string;
    const a = await newArticle(live, { test_mode: false }, { pass_hours: 2 });
    const plain = await newCheckout(seller.key);

    const issued = await call("POST", `/v1/content/${a.id}/grants`, { key: live, body: { subject: "reader-42", scope: "content", uses: 2 } });
    expect(issued.status).toBe(201);
    expect(issued.body).toMatchObject({ grant: expect.stringMatching(/^gp1\./), grant_scope: "content" });
    expect(issued.body.grant_expires_in).toBeGreaterThan(7_190);
    expect(issued.body.grant_expires_in).toBeLessThanOrEqual(7_200);
    const reads = [await read(`/x/${a.id}`, issued.body.grant), await read(`/x/${a.id}`, issued.body.grant), await read(`/x/${a.id}`, issued.body.grant)];
    expect(reads.map((r) => r.status)).toEqual([200, 200, 402]);
    expect(reads.map((r) => r.headers.get("x-service-grant-uses-left"))).toEqual(["1", "0", null]);
    expect(reads[2]!.body.grant_refused.reason).toBe("used_up");

    const events = (await call("GET", "/v1/account/events?action=pass", { key: seller.key })).body.events;
    expect(events[0]).toMatchObject({
      action: "pass.issued",
      actor: expect.stringMatching(/^key:sk_live_/),
      detail: { subject: "reader-42", scope: "content", content_id: a.id, uses: 2 },
    });
    expect(JSON.stringify(events)).not.toContain(issued.body.grant);

    // A test key's pass opens rehearsal faces only.
    const testPass = (await call("POST", "/v1/grants", { key: seller.key, body: { subject: "qa" } })).body;
    expect(testPass.grant_scope).toBe("seller");
    expect(testPass.grant_expires_in).toBeGreaterThan(86_390);
    expect((await read(`/x/${a.id}`, testPass.grant)).body.grant_refused?.reason).toBe("rehearsal_pass");
    expect((await read(`/x/${a.id}/test`, testPass.grant)).status).toBe(200);

    const brief = (await call("POST", "/v1/grants", { key: live, body: { subject: "brief", ttl_seconds: 1 } })).body;
    expect((await read(`/x/${a.id}`, brief.grant)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await read(`/x/${a.id}`, brief.grant)).body.grant_refused?.reason).toBe("expired");

    expect((await call("POST", `/v1/content/${plain.id}/grants`, { key: seller.key, body: { subject: "x" } })).status).toBe(404);
    expect((await call("POST", `/v1/grants`, { key: seller.key, body: { subject: "x", ttl_seconds: 31 * 86_400 + 1 } })).status).toBe(422);
    expect((await call("POST", `/v1/grants`, { key: seller.key, body: {} })).status).toBe(422);
    const readOnly = (await call("POST", "/v1/keys", { key: seller.key, body: { scope: "read_only" } })).body.secret as string;
    expect((await call("POST", `/v1/grants`, { key: readOnly, body: { subject: "x" } })).status).toBe(403);
  });

  it("edits are live for the next read, pass holders included; PATCH refuses article fields elsewhere; a void article is gone", async () => {
    const seller = await newSeller();
    const a = await newArticle(seller.key);
    const { grant } = (await payRehearsal(a.id)).body;
    const patched = await call("PATCH", `/v1/checkouts/${a.id}`, {
      key: seller.key,
      body: { payload: "<p>Second edition.</p>", content: { pass_scope: "content" } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.content).toMatchObject({ pass_scope: "content", author: null, keywords: [] });
    const again = await read(`/x/${a.id}/test`, grant);
    expect(again.text).toContain('<article class="c402-paid"><p>Second edition.</p></article>');
    // A purchase after the edit delivers the new edition, not the one kept from the purchase before it (ADR 14).
    expect((await payRehearsal(a.id)).body.fulfillment.payload).toBe("<p>Second edition.</p>");
    expect((await call("GET", `/x/${a.id}`)).body.endpoint.article.pass.scope).toBe("content");

    expect((await call("PATCH", `/v1/checkouts/${a.id}`, { key: seller.key, body: { payload: null } })).status).toBe(422);
    const plain = await newCheckout(seller.key);
    const refused = await call("PATCH", `/v1/checkouts/${plain.id}`, { key: seller.key, body: { content: {} } });
    expect([refused.status, refused.body.errors?.[0]?.field]).toEqual([422, "content"]);

    expect((await call("DELETE", `/v1/checkouts/${a.id}`, { key: seller.key })).status).toBe(200);
    expect((await read(`/x/${a.id}/test`, grant)).status).toBe(410);
    expect((await call("GET", `/x/${a.id}/snippet`)).status).toBe(410);
  });

  it("a JSON article is answered verbatim; the snippet carries the teaser, the gate and structured data", async () => {
    const seller = await newSeller();
    await call("PUT", "/v1/account/embed", { key: seller.key, body: { embed_origins: ["https://shop.example"] } });
    const a = await newArticle(seller.key, { payload: { rows: [1, 2, 3] } }, { canonical_url: "https://blog.example/data", teaser: "Three rows." });
    const { grant } = (await payRehearsal(a.id)).body;
    const r = await read(`/x/${a.id}/test`, grant);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    expect(r.body).toEqual({ rows: [1, 2, 3] });
    expect(r.headers.get("content-security-policy")).toContain("frame-ancestors https://shop.example https://blog.example");
    expect(r.headers.get("x-frame-options")).toBeNull();

    const snippet = await call("GET", `/x/${a.id}/snippet`);
    expect(snippet.status).toBe(200);
    expect(snippet.body).toMatchObject({ gate_url: `${baseUrl()}/x/${a.id}`, teaser: "Three rows.", price_usd: "0.250000" });
    expect(snippet.body.snippet).toContain(`href="${baseUrl()}/x/${a.id}"`);
    expect(snippet.body.snippet).toContain('<script type="application/ld+json">');
    expect(snippet.body.jsonld).toMatchObject({
      "@type": "Article",
      headline: "The manor mystery",
      isAccessibleForFree: false,
      hasPart: { cssSelector: ".c402-paid", isAccessibleForFree: false },
      url: "https://blog.example/data",
      author: { name: "A. Writer" },
    });
    const wall = await call("GET", `/x/${a.id}`, { headers: { accept: "text/html" } });
    expect(wall.headers.get("content-security-policy")).toMatch(/; frame-ancestors https:\/\/shop\.example https:\/\/blog\.example$/);
  });

  it("the live face on the devchain: the official client pays for real and its pass opens the live article", async () => {
    const chain = await devchainWallets(10);
    const buyer = await chain.fundedBuyer(1_000_000n);
    const seller = await newSeller();
    const a = await newArticle(seller.key, { test_mode: false, price_usd: "0.10" });
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: buyer });
    const res = await wrapFetchWithPayment(fetch, client)(`${baseUrl()}/x/${a.id}`, { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    const paid = (await res.json()) as Record<string, any>;
    expect(paid.receipt).toMatchObject({ test_mode: false, total: 110_500, payer: buyer.address });
    expect(paid.fulfillment.payload).toBe(ARTICLE);
    const r = await read(`/x/${a.id}`, paid.grant);
    expect(r.status).toBe(200);
    expect(r.text).toContain(SECRET);
  });

  it("a relay article: the seller's origin answers each purchase and each read with a pass (the pass never reaches it); its failure is a 502", async () => {
    const origin = await startFakeOrigin();
    try {
      const seller = await newSeller();
      expect(
        (
          await call("POST", "/v1/checkouts", {
            key: seller.key,
            body: { title: "x", price_usd: "0.10", origin_url: `${origin.url}/html`, payload: "t", content: {} },
          })
        ).status,
      ).toBe(422);
      const a = await newCheckout(seller.key, {
        title: "Origin article",
        price_usd: "0.25",
        payload: undefined,
        origin_url: `${origin.url}/html`,
        origin_auth_type: "bearer",
        origin_auth_value: "origin-secret",
        reusable: true,
        content: { teaser: "From my own server." },
      });
      expect([a.id.slice(0, 4), a.fulfillment, a.url]).toEqual(["cnt_", "relay", `${baseUrl()}/x/${a.id}`]);
      const paid = (await payRehearsal(a.id)).body;
      expect(paid.fulfillment).toMatchObject({ mode: "relay", origin_status: 200, payload: expect.stringContaining("From the origin") });
      expect(paid.grant).toMatch(/^gp1\./);

      const r = await call("GET", `/x/${a.id}/test?lang=fr&grant=${encodeURIComponent(paid.grant)}`);
      expect(r.status).toBe(200);
      expect(r.text).toContain('<article class="c402-paid"><h2>From the origin</h2><p>lang=fr</p></article>');
      expect(r.headers.get("x-ratelimit-limit")).toBe("60");
      const last = origin.callsTo("/html").at(-1)!;
      expect(last.query).toEqual({ lang: "fr" });
      expect(last.headers.authorization).toBe("Bearer origin-secret");
      expect(JSON.stringify(origin.calls)).not.toContain(paid.grant);
      // Its body is the origin's: there is no payload to change, only the declaration.
      const patched = await call("PATCH", `/v1/checkouts/${a.id}`, { key: seller.key, body: { payload: "<p>x</p>" } });
      expect([patched.status, patched.body.errors?.[0]?.field]).toEqual([422, "payload"]);
      expect((await call("PATCH", `/v1/checkouts/${a.id}`, { key: seller.key, body: { content: { pass_scope: "content" } } })).status).toBe(200);

      // A reader's request error is the origin's own answer; the origin failing is a 502 (nothing charged).
      const broken = await newCheckout(seller.key, {
        title: "Broken",
        payload: undefined,
        origin_url: `${origin.url}/status/503`,
        reusable: true,
        content: {},
      });
      const pass = (await call("POST", `/v1/content/${broken.id}/grants`, { key: seller.key, body: { subject: "qa", uses: 1 } })).body.grant;
      // A one-read pass: the origin's failures never spend it.
      for (let i = 0; i < 2; i++) {
        const failed = await read(`/x/${broken.id}/test`, pass);
        expect([failed.status, failed.body.fault, failed.body.charged]).toEqual([502, "seller", false]);
        expect(failed.body.help.report).toMatchObject({ method: "POST", url: `${baseUrl()}/v1/checkouts/${broken.id}/reports` });
      }
      const missing = await newCheckout(seller.key, {
        title: "Missing",
        payload: undefined,
        origin_url: `${origin.url}/status/404`,
        reusable: true,
        content: {},
      });
      const pass2 = (await call("POST", `/v1/content/${missing.id}/grants`, { key: seller.key, body: { subject: "qa" } })).body.grant;
      const notThere = await read(`/x/${missing.id}/test`, pass2);
      expect([notThere.status, notThere.body.error]).toEqual([404, "status 404"]);
    } finally {
      await origin.close();
    }
  });

  it("the MCP tools: get, update, snippet and passes for the seller; quote and rehearsal purchase for a buyer", async () => {
    const seller = await newSeller();
    const a = await newArticle(seller.key);
    expect((await mcp(seller.key, "get_content", { checkout_id: a.id })).result?.structuredContent).toMatchObject({ id: a.id, body: ARTICLE });
    const updated = await mcp(seller.key, "update_content", { checkout_id: a.id, payload: "<p>Revised.</p>", content: { teaser: "New teaser" } });
    expect(updated.result?.structuredContent).toMatchObject({ body: "<p>Revised.</p>", content: { teaser: "New teaser" } });
    expect((await mcp(seller.key, "get_content_snippet", { checkout_id: a.id })).result?.structuredContent).toMatchObject({
      gate_url: `${baseUrl()}/x/${a.id}`,
      teaser: "New teaser",
    });
    const issued = (await mcp(seller.key, "issue_content_grant", { checkout_id: a.id, subject: "mcp-reader", scope: "content", ttl_seconds: 600 })).result
      ?.structuredContent;
    expect(issued).toMatchObject({ grant_scope: "content" });
    expect((await read(`/x/${a.id}/test`, issued.grant)).text).toContain("Revised.");
    const plain = await newCheckout(seller.key);
    expect((await mcp(seller.key, "get_content", { checkout_id: plain.id })).error?.data?.status).toBe(404);

    const quote = (await mcp(undefined, "quote_checkout", { checkout: `${baseUrl()}/x/${a.id}` })).result?.structuredContent;
    expect(quote).toMatchObject({ checkout_id: a.id, face: "live", endpoint: { article: { teaser: "New teaser" } } });
    const bought = (await mcp(undefined, "pay_test_checkout", { checkout: `${baseUrl()}/x/${a.id}` })).result?.structuredContent;
    expect(bought).toMatchObject({ http_status: 200, fulfillment: { payload: "<p>Revised.</p>" }, grant_scope: "seller" });
    expect((await read(`/x/${a.id}/test`, bought.grant)).status).toBe(200);
    const wrongFace = await mcp(undefined, "quote_checkout", { checkout: `${baseUrl()}/c/${a.id}` });
    expect(wrongFace.error?.data?.status ?? wrongFace.result?.isError).toBeTruthy();
  });

  it("never answers a 5xx, whatever the declaration, pass or path", async () => {
    const seller = await newSeller();
    const a = await newArticle(seller.key);
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), fc.string({ maxLength: 300 }), async (content, pass) => {
        const created = await call("POST", "/v1/checkouts", { key: seller.key, body: { title: "fuzz", price_usd: "0.10", payload: "t", content } });
        expect(created.status).toBeLessThan(500);
        const patched = await call("PATCH", `/v1/checkouts/${a.id}`, { key: seller.key, body: { content } });
        expect(patched.status).toBeLessThan(500);
        const r = await call("GET", `/x/${a.id}/test?grant=${encodeURIComponent(pass)}`);
        expect(r.status).toBeLessThan(500);
        const issued = await call("POST", "/v1/grants", { key: seller.key, body: { subject: pass, uses: content } });
        expect(issued.status).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
  });
});
