import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogV1, identityV1, schedulesV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { ACCOUNT_ID, BASE_URL, bodyOf, recorded, servers } from "../support/fake-gateway";

/**
 * A seller's public catalogue (routes/seller-catalogue.ts): the JSON at
 * /v1/sellers/{slug}/offers, the page at /schedule/{slug} and the fragment at
 * /v1/sellers/{slug}/embed, from identity's GetPublicProfile and catalog's
 * ListSellingOffers; and /schedule/{id} for a series, its buyer view (routes/schedules.ts).
 */

const serve = servers();
const SLUG = "ada-weather";
const SERIES_ID = "sch_Series000000000000000000";

function profile() {
  return create(identityV1.ProfileSchema, {
    accountId: ACCOUNT_ID,
    slug: SLUG,
    name: "Ada's <Weather>",
    profileType: identityV1.ProfileType.COMPANY,
    bio: "Forecasts & tides",
    avatarUrl: "https://cdn.example/ada.png",
    websiteUrl: "https://ada.example",
    socialLinks: { links: { github: "https://github.com/ada", bad: "javascript:alert(1)" } },
    verified: true,
    createdAt: timestampFromDate(new Date("2026-01-02T03:04:05.000Z")),
    updatedAt: timestampFromDate(new Date("2026-01-02T03:04:05.000Z")),
  });
}

/** A selling offer created `n` minutes after a fixed instant (so newer ones have larger n). */
function offer(n: number, init: { title?: string; reusable?: boolean; price?: bigint; claims?: Partial<catalogV1.OfferCard>; expiresAt?: Date } = {}) {
  const id = `chk_Offer${String(n).padStart(19, "0")}`;
  return create(catalogV1.SellingOfferSchema, {
    checkout: {
      id,
      accountId: ACCOUNT_ID,
      title: init.title ?? `Offer ${n}`,
      description: `About offer ${n}`,
      priceAtomic: init.price ?? 100_000n,
      payTo: "0x1111111111111111111111111111111111111111",
      fulfillment: catalogV1.Fulfillment.INLINE,
      reusable: init.reusable ?? true,
      armed: true,
      status: catalogV1.CheckoutStatus.OPEN,
      createdAt: timestampFromDate(new Date(Date.UTC(2026, 0, 1, 0, n))),
      ...(init.expiresAt ? { expiresAt: timestampFromDate(init.expiresAt) } : {}),
    },
    offer: init.claims ?? {},
  });
}

/** identity answers the profile for SLUG only (another slug: not-found, as identity says it); catalog answers `offers`, at most the page size asked. */
function fakes(offers: catalogV1.SellingOffer[], opts: { identityFailure?: Error } = {}) {
  return recorded({
    identity: {
      getPublicProfile: async ({ slug }: { slug?: string }) => {
        if (opts.identityFailure) throw opts.identityFailure;
        if (slug !== SLUG) throw new ProblemError("not-found", "No seller has this slug.");
        return create(identityV1.GetPublicProfileResponseSchema, { profile: profile() });
      },
    },
    catalog: {
      listSellingOffers: async ({ pageSize }: { pageSize?: number }) =>
        create(catalogV1.ListSellingOffersResponseSchema, { offers: offers.slice(0, pageSize ?? offers.length) }),
    },
    // A series id at /schedule/{id} is the series' buyer view (an ended one: nothing left to cancel).
    schedules: {
      getBuyerView: async () => create(schedulesV1.GetBuyerViewResponseSchema, { schedule: { id: SERIES_ID, status: "completed", network: "eip155:8453" } }),
    },
  });
}

const THREE = [
  offer(3, { title: "Tides <Brest>", claims: { freshness: "daily", source: "SHOM & co" } }),
  offer(2, { reusable: false, price: 1_000_000n, expiresAt: new Date("2026-12-01T00:00:00.000Z") }),
  offer(1),
];

/** The checkout ids a body names, in order of first appearance. */
const idsIn = (text: string) => [...new Set([...text.matchAll(/chk_Offer[0-9]{19}/g)].map((m) => m[0]))];

describe("GET /v1/sellers/{slug}/offers", () => {
  it("answers the seller's public profile and what it sells, newest first, with each face and what the buyer pays", async () => {
    const { fakes: f, calls } = fakes(THREE);
    const { url } = await serve.app(f);
    const res = await fetch(`${url}/v1/sellers/${SLUG}/offers`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const body = await bodyOf(res);
    expect(body).toEqual({
      object: "seller_catalogue",
      seller: {
        slug: SLUG,
        name: "Ada's <Weather>",
        profile_type: "company",
        bio: "Forecasts & tides",
        avatar_url: "https://cdn.example/ada.png",
        website_url: "https://ada.example",
        social_links: { github: "https://github.com/ada", bad: "javascript:alert(1)" },
        verified: true,
      },
      offers: expect.any(Array),
      has_more: false,
      next_cursor: null,
      links: {
        offers: `${BASE_URL}/v1/sellers/${SLUG}/offers`,
        page: `${BASE_URL}/schedule/${SLUG}`,
        embed: `${BASE_URL}/v1/sellers/${SLUG}/embed`,
        profile: `${BASE_URL}/u/${SLUG}`,
      },
    });
    expect(body.offers.map((o: { id: string }) => o.id)).toEqual(THREE.map((o) => o.checkout!.id));
    expect(body.offers[0]).toEqual({
      id: "chk_Offer0000000000000000003",
      object: "offer",
      title: "Tides <Brest>",
      calls_included: null,
      description: "About offer 3",
      price_usd: "0.100000",
      fee_usd: "0.010500",
      total_usd: "0.110500",
      currency: "USDC",
      reusable: true,
      url: `${BASE_URL}/c/chk_Offer0000000000000000003`,
      test_url: `${BASE_URL}/c/chk_Offer0000000000000000003/test`,
      call_url: null,
      created_at: "2026-01-01T00:03:00.000Z",
      expires_at: null,
      freshness: "daily",
      coverage: null,
      source: "SHOM & co",
      constraints: null,
    });
    expect(body.offers[1]).toMatchObject({
      price_usd: "1.000000",
      fee_usd: "0.015000",
      total_usd: "1.015000",
      reusable: false,
      expires_at: "2026-12-01T00:00:00.000Z",
    });
    // The account id stays private: not in the seller block, not anywhere.
    expect(JSON.stringify(body)).not.toContain(ACCOUNT_ID);
    // Identity resolves the slug; catalog lists that account's selling offers, one more than a page to learn whether more exist.
    expect(calls.map((c) => [`${c.client}.${c.method}`, c.req])).toEqual([
      ["identity.getPublicProfile", { slug: SLUG }],
      ["catalog.listSellingOffers", { accountId: ACCOUNT_ID, pageSize: 51 }],
    ]);
  });

  it("pages with limit and cursor like every list: has_more and a next_cursor that starts after the last offer shown", async () => {
    const { fakes: f, of } = fakes(THREE);
    const { url } = await serve.app(f);
    const first = await bodyOf(await fetch(`${url}/v1/sellers/${SLUG}/offers?limit=2`));
    expect(first.offers.map((o: { id: string }) => o.id)).toEqual(THREE.slice(0, 2).map((o) => o.checkout!.id));
    expect(first.has_more).toBe(true);
    expect(first.next_cursor).toEqual(expect.any(String));
    await fetch(`${url}/v1/sellers/${SLUG}/offers?limit=2&cursor=${first.next_cursor}`);
    expect(of("listSellingOffers")[1]).toEqual({
      accountId: ACCOUNT_ID,
      pageSize: 3,
      after: { createdAt: THREE[1]!.checkout!.createdAt, id: THREE[1]!.checkout!.id },
    });
  });

  it.each([
    ["a limit above 200", "limit=201", "limit"],
    ["a limit of 0", "limit=0", "limit"],
    ["a cursor that no page gave", "cursor=not-a-cursor", "cursor"],
  ])("refuses %s with 422 naming it, before asking anyone", async (_what, query, field) => {
    const { fakes: f, called } = fakes(THREE);
    const { url } = await serve.app(f);
    const res = await fetch(`${url}/v1/sellers/${SLUG}/offers?${query}`);
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect((await bodyOf(res)).errors).toEqual([{ field, reason: expect.any(String) }]);
    expect(called()).toEqual([]);
  });

  it("a slug no seller holds is 404; text that cannot be a slug is 404 without asking anyone", async () => {
    const { fakes: f, called } = fakes(THREE);
    const { url } = await serve.app(f);
    const unknown = await fetch(`${url}/v1/sellers/nobody-here/offers`);
    expect(unknown.status).toBe(404);
    expect(await bodyOf(unknown)).toMatchObject({ status: 404, type: expect.stringMatching(/\/problems\/not-found$/) });
    expect(called()).toEqual(["identity.getPublicProfile"]);
    for (const text of ["Ada", "a", "ada_weather", "x".repeat(40), "-ada", "%00", "ad%C3%A9", SERIES_ID]) {
      const res = await fetch(`${url}/v1/sellers/${text}/offers`);
      expect([text, res.status]).toEqual([text, 404]);
    }
    expect(called()).toEqual(["identity.getPublicProfile"]);
  });

  it("a seller with nothing on sale has an empty catalogue, not a 404", async () => {
    const { fakes: f } = fakes([]);
    const { url } = await serve.app(f);
    const body = await bodyOf(await fetch(`${url}/v1/sellers/${SLUG}/offers`));
    expect(body).toMatchObject({ offers: [], has_more: false, next_cursor: null });
  });

  it("identity unavailable: 503 with Retry-After, never cached", async () => {
    const { fakes: f } = fakes(THREE, { identityFailure: new ProblemError("unavailable", "identity is not answering") });
    const { url } = await serve.app(f);
    const res = await fetch(`${url}/v1/sellers/${SLUG}/offers`);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toMatch(/^[0-9]+$/);
    expect(res.headers.get("cache-control")).toBeNull();
  });
});

describe("GET /schedule/{slug}", () => {
  it("shows the same offers as a page: escaped, loading nothing, framed by nobody, with each offer's faces", async () => {
    const { fakes: f } = fakes(THREE);
    const { url } = await serve.app(f);
    const res = await fetch(`${url}/schedule/${SLUG}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    const page = await res.text();
    expect(idsIn(page)).toEqual(THREE.map((o) => o.checkout!.id));
    // Every value is escaped; the seller's javascript: link is not rendered at all.
    expect(page).toContain("Ada&#39;s &#60;Weather&#62;");
    expect(page).toContain("Tides &#60;Brest&#62;");
    expect(page).toContain("SHOM &#38; co");
    expect(page).not.toContain("<Weather>");
    expect(page).not.toMatch(/javascript:/i);
    expect(page).toContain('href="https://github.com/ada"');
    expect(page).toContain(`href="${BASE_URL}/c/chk_Offer0000000000000000003"`);
    expect(page).toContain(`href="${BASE_URL}/c/chk_Offer0000000000000000003/test"`);
    expect(page).toContain("0.110500 USDC");
    // Nothing is loaded: no script, no image, no stylesheet; the one <style> is the one the CSP's hash allows.
    expect(page).not.toMatch(/<script|<img|<link|<iframe|src=/i);
    const style = /<style>([^<]*)<\/style>/.exec(page)![1]!;
    expect(csp).toContain(`'sha256-${createHash("sha256").update(style).digest("base64")}'`);
  });

  it("links the next page when there is more", async () => {
    const { fakes: f } = fakes(THREE);
    const { url } = await serve.app(f);
    const page = await (await fetch(`${url}/schedule/${SLUG}?limit=1`)).text();
    expect(idsIn(page)).toEqual([THREE[0]!.checkout!.id]);
    expect(page).toMatch(new RegExp(`href="${BASE_URL}/schedule/${SLUG}\\?cursor=[A-Za-z0-9_-]+&#38;limit=1" rel="next"`));
  });

  it("a series id in the place of the slug reaches the series' buyer view; another id is 404; a slug keeps the catalogue", async () => {
    const { fakes: f, called } = fakes(THREE);
    const { url } = await serve.app(f);
    const res = await fetch(`${url}/schedule/${SERIES_ID}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(await bodyOf(res)).toMatchObject({ id: SERIES_ID, status: "completed", cancel: null });
    const other = await fetch(`${url}/schedule/chk_Weather000000000000000000`);
    expect(other.status).toBe(404);
    const unknown = await fetch(`${url}/schedule/nobody-here`);
    expect(unknown.status).toBe(404);
    expect((await bodyOf(unknown)).detail.message).toBe("No seller has this slug.");
    expect(called()).toEqual(["schedules.getBuyerView", "identity.getPublicProfile"]);
  });
});

describe("GET /v1/sellers/{slug}/embed", () => {
  it("is a fragment of the same offers: one root element, styles scoped under it, links opening the faces, readable and frameable by any site", async () => {
    const { fakes: f } = fakes(THREE);
    const { url } = await serve.app(f);
    const res = await fetch(`${url}/v1/sellers/${SLUG}/embed`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    expect(res.headers.get("x-frame-options")).toBeNull();
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).not.toMatch(/frame-ancestors/);
    const fragment = (await res.text()).trim();
    expect(fragment).toMatch(/^<div class="c402-catalogue" data-svc-catalogue="ada-weather">/);
    expect(fragment).toMatch(/<\/div>$/);
    expect(fragment).not.toMatch(/<html|<head|<body|<script|<img|<link|src=/i);
    expect(idsIn(fragment)).toEqual(THREE.map((o) => o.checkout!.id));
    expect(fragment).toContain("Tides &#60;Brest&#62;");
    expect(fragment).toContain(`<a href="${BASE_URL}/c/chk_Offer0000000000000000003" target="_blank" rel="noopener noreferrer">`);
    // Every rule of its stylesheet applies under the root class only (nothing leaks into the host page).
    const style = /<style>([^<]*)<\/style>/.exec(fragment)![1]!;
    const selectors = [...style.matchAll(/(?:^|\})([^{}]+)\{/g)].flatMap((m) => m[1]!.split(","));
    expect(selectors.length).toBeGreaterThan(5);
    for (const selector of selectors) expect([selector, selector.trim().startsWith(".c402-catalogue")]).toEqual([selector, true]);
    expect(csp).toContain(`'sha256-${createHash("sha256").update(style).digest("base64")}'`);
  });
});

describe("the three forms", () => {
  it("show the same selling set, in the same order, from one answer of each service", async () => {
    const { fakes: f } = fakes(THREE);
    const { url } = await serve.app(f);
    const json = await (await fetch(`${url}/v1/sellers/${SLUG}/offers`)).text();
    const page = await (await fetch(`${url}/schedule/${SLUG}`)).text();
    const embed = await (await fetch(`${url}/v1/sellers/${SLUG}/embed`)).text();
    const expected = THREE.map((o) => o.checkout!.id);
    expect([idsIn(json), idsIn(page), idsIn(embed)]).toEqual([expected, expected, expected]);
  });
});
