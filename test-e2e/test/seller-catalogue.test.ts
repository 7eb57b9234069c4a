import { baseUrl, call, newCheckout, newSeller } from "../src/http";

/**
 * A seller's public catalogue, black-box: the seller takes a slug
 * (PATCH /auth/me), creates checkouts, voids one; the JSON
 * (/v1/sellers/{slug}/offers), the page (/schedule/{slug}) and the embeddable
 * fragment (/v1/sellers/{slug}/embed) all list the same selling set, newest
 * first, without credentials. A series id at /schedule/{id} is the series' buyer view.
 */

const CHECKOUT_ID = /chk_[0-9A-Za-z]{24}/g;
/** The checkout ids a body names, in order of first appearance. */
const idsIn = (text: string) => [...new Set(text.match(CHECKOUT_ID) ?? [])];
const GOODS = `secret-goods-${Date.now()}`;

let seller: Awaited<ReturnType<typeof newSeller>>;
let slug: string;

/** The three forms of the catalogue, fetched with no credential. */
async function forms(of = slug) {
  const json = await call("GET", `/v1/sellers/${of}/offers`);
  const page = await call("GET", `/schedule/${of}`, { headers: { accept: "text/html" } });
  const embed = await call("GET", `/v1/sellers/${of}/embed`, { headers: { accept: "text/html" } });
  return { json, page, embed };
}

beforeAll(async () => {
  seller = await newSeller();
  slug = `shop-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
  const r = await call("PATCH", "/auth/me", { key: seller.key, body: { slug, name: "Ada's <Weather>", bio: "Forecasts & tides" } });
  if (r.status !== 200) throw new Error(`PATCH /auth/me answered ${r.status}: ${r.text}`);
});

describe("a seller's public catalogue", () => {
  it("the JSON, the page and the fragment show the same selling set: armed and open checkouts, newest first (not the voided one, not the rehearsal-only one)", async () => {
    const reusable = await newCheckout(seller.key, {
      title: "Tides for Brest",
      price_usd: "0.25",
      reusable: true,
      test_mode: false,
      freshness: "daily",
      payload: { goods: GOODS },
    });
    const single = await newCheckout(seller.key, { title: "Weather for Paris", test_mode: false, payload: { goods: GOODS } });
    const voided = await newCheckout(seller.key, { title: "Retired", reusable: true, test_mode: false });
    const rehearsal = await newCheckout(seller.key, { title: "Rehearsal only", test_mode: true });
    expect((await call("DELETE", `/v1/checkouts/${voided.id}`, { key: seller.key })).status).toBe(200);

    const { json, page, embed } = await forms();
    const selling = [single.id, reusable.id];
    expect(json.status).toBe(200);
    expect(json.body.offers.map((o: { id: string }) => o.id)).toEqual(selling);
    expect(page.status).toBe(200);
    expect(idsIn(page.text)).toEqual(selling);
    expect(embed.status).toBe(200);
    expect(idsIn(embed.text)).toEqual(selling);

    // The seller's public profile, and each offer with its faces and what the buyer pays (fee on top).
    expect(json.body.seller).toEqual({
      slug,
      name: "Ada's <Weather>",
      profile_type: null,
      bio: "Forecasts & tides",
      avatar_url: null,
      website_url: null,
      social_links: {},
      verified: false,
    });
    expect(json.body.offers[1]).toMatchObject({
      id: reusable.id,
      title: "Tides for Brest",
      price_usd: "0.250000",
      fee_usd: "0.011250",
      total_usd: "0.261250",
      reusable: true,
      url: `${baseUrl()}/c/${reusable.id}`,
      test_url: `${baseUrl()}/c/${reusable.id}/test`,
      freshness: "daily",
    });
    expect(json.body.links).toEqual({
      offers: `${baseUrl()}/v1/sellers/${slug}/offers`,
      page: `${baseUrl()}/schedule/${slug}`,
      embed: `${baseUrl()}/v1/sellers/${slug}/embed`,
      profile: `${baseUrl()}/u/${slug}`,
    });
    // Public data: the goods and the account id never appear, in any form.
    for (const text of [json.text, page.text, embed.text]) {
      expect(text).not.toContain(GOODS);
      expect(text).not.toContain(seller.accountId);
    }
    // Each offer's url is its live face: it answers the 402 with the same total.
    const face = await call("GET", `/c/${reusable.id}`);
    expect(face.status).toBe(402);
    expect(face.body.offer.total_usd).toBe("0.261250");

    // Restored, the voided one sells again; armed, the rehearsal-only one joins.
    expect((await call("POST", `/v1/checkouts/${voided.id}/restore`, { key: seller.key })).status).toBe(200);
    expect((await call("POST", `/v1/checkouts/${rehearsal.id}/go-live`, { key: seller.key })).status).toBe(200);
    const after = await forms();
    const now = [rehearsal.id, voided.id, single.id, reusable.id];
    expect([after.json.body.offers.map((o: { id: string }) => o.id), idsIn(after.page.text), idsIn(after.embed.text)]).toEqual([now, now, now]);
  });

  it("pages: limit and the next_cursor walk every offer once", async () => {
    const all = (await call("GET", `/v1/sellers/${slug}/offers`)).body.offers.map((o: { id: string }) => o.id);
    expect(all.length).toBeGreaterThan(2);
    const seen: string[] = [];
    let path = `/v1/sellers/${slug}/offers?limit=1`;
    for (let i = 0; i < 20; i++) {
      const r = await call("GET", path);
      seen.push(...r.body.offers.map((o: { id: string }) => o.id));
      if (!r.body.has_more) break;
      path = `/v1/sellers/${slug}/offers?limit=1&cursor=${r.body.next_cursor}`;
    }
    expect(seen).toEqual(all);
    expect((await call("GET", `/v1/sellers/${slug}/offers?limit=201`)).status).toBe(422);
  });

  it("answers as public, cacheable data: any origin may read the JSON and the fragment; the page loads nothing and is framed by nobody", async () => {
    const { json, page, embed } = await forms();
    for (const r of [json, page, embed]) expect(r.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
    expect(json.headers.get("access-control-allow-origin")).toBe("*");
    expect(embed.headers.get("access-control-allow-origin")).toBe("*");
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'.*frame-ancestors 'none'/);
    expect(page.text).toContain("Ada&#39;s &#60;Weather&#62;");
    expect(page.text).not.toMatch(/<script|<img|<link|src=/i);
    expect(embed.text.trim()).toMatch(/^<div [^>]*data-svc-catalogue="[^"]+">[\s\S]*<\/div>$/);
    expect(embed.text).not.toMatch(/<html|<body|<script/i);
  });

  it("a slug nobody holds is 404 in every form; a slug given up stops resolving at once", async () => {
    for (const r of Object.values(await forms("nobody-holds-this-slug"))) {
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
    for (const text of ["Not_A_Slug", "x"]) expect((await call("GET", `/v1/sellers/${text}/offers`)).status).toBe(404);
    const other = await newSeller();
    const given = `gone-${Date.now().toString(36)}`;
    expect((await call("PATCH", "/auth/me", { key: other.key, body: { slug: given } })).status).toBe(200);
    expect((await call("GET", `/v1/sellers/${given}/offers`)).body.offers).toEqual([]);
    expect((await call("PATCH", "/auth/me", { key: other.key, body: { slug: "" } })).status).toBe(200);
    expect((await call("GET", `/v1/sellers/${given}/offers`)).status).toBe(404);
  });

  it("a series id at /schedule/{id} is the series' buyer view: an unknown one answers 404", async () => {
    const r = await call("GET", "/schedule/sch_000000000000000000000000");
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toMatch(/problem\+json/);
    // While a seller's slug answers its catalogue at the same place.
    expect((await call("GET", `/schedule/${slug}`)).status).toBe(200);
  });
});
