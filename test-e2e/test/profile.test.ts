import { call, newSeller, walletSession } from "../src/http";

/**
 * The seller profile over the running services: GET and PATCH /auth/me
 * through the gateway to identity (gRPC), its rules and scopes, and the
 * `profile.updated` row each change leaves in GET /v1/account/events.
 */

let n = 0;
/** A slug no other test (or earlier run against the same database) uses. */
const freshSlug = (stem = "seller") => `${stem}-${Date.now().toString(36)}-${n++}`;

async function profileEvents(key: string) {
  const r = await call("GET", "/v1/account/events?action=profile.", { key });
  if (r.status !== 200) throw new Error(`events: ${r.status} ${r.text}`);
  return r.body.events as { action: string; object_id: string; actor: string; test_mode: boolean; detail: Record<string, unknown> }[];
}

describe("seller profile (/auth/me)", () => {
  it("a fresh seller has an empty profile; PATCH changes only what is sent and answers it; GET reads it back", async () => {
    const seller = await newSeller();
    const fresh = await call("GET", "/auth/me", { key: seller.key });
    expect(fresh.status).toBe(200);
    expect(fresh.body).toEqual({
      object: "profile",
      account_id: seller.accountId,
      slug: null,
      name: null,
      profile_type: null,
      bio: null,
      avatar_url: null,
      website_url: null,
      social_links: {},
      verified: false,
      created_at: expect.any(String),
      updated_at: fresh.body.created_at,
    });

    const slug = freshSlug();
    const changed = await call("PATCH", "/auth/me", {
      key: seller.key,
      body: {
        slug,
        name: "Ada's Weather",
        profile_type: "company",
        bio: "Hourly forecasts.\nEuropean cities.",
        avatar_url: "https://cdn.example/ada.png",
        website_url: "https://ada.example",
        social_links: { github: "https://github.com/ada", x: "https://x.com/ada" },
      },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      object: "profile",
      account_id: seller.accountId,
      slug,
      name: "Ada's Weather",
      profile_type: "company",
      bio: "Hourly forecasts.\nEuropean cities.",
      avatar_url: "https://cdn.example/ada.png",
      website_url: "https://ada.example",
      social_links: { github: "https://github.com/ada", x: "https://x.com/ada" },
      verified: false,
      created_at: fresh.body.created_at,
    });
    expect(Date.parse(changed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(fresh.body.updated_at));
    expect((await call("GET", "/auth/me", { key: seller.key })).body).toEqual(changed.body);

    // "" clears, null and leaving out keep, social_links is replaced wholesale.
    const second = await call("PATCH", "/auth/me", {
      key: seller.key,
      body: { name: "", bio: null, website_url: "", social_links: { mastodon: "https://mastodon.social/@ada" } },
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      slug,
      name: null,
      bio: "Hourly forecasts.\nEuropean cities.",
      website_url: null,
      avatar_url: "https://cdn.example/ada.png",
      social_links: { mastodon: "https://mastodon.social/@ada" },
    });
    const emptied = await call("PATCH", "/auth/me", { key: seller.key, body: { social_links: {} } });
    expect(emptied.body.social_links).toEqual({});
    expect((await call("GET", "/auth/me", { key: seller.key })).body).toEqual(emptied.body);
  });

  it("a slug one seller holds is 409 for another, whose profile stays as it was; given up, the slug can be taken", async () => {
    const a = await newSeller();
    const b = await newSeller();
    const slug = freshSlug("taken");
    expect((await call("PATCH", "/auth/me", { key: a.key, body: { slug } })).status).toBe(200);
    const refused = await call("PATCH", "/auth/me", { key: b.key, body: { slug, name: "B" } });
    expect(refused.status).toBe(409);
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ type: expect.stringMatching(/\/problems\/conflict$/), status: 409, errors: [{ field: "slug", reason: "is taken" }] });
    expect((await call("GET", "/auth/me", { key: b.key })).body).toMatchObject({ slug: null, name: null });
    // Each seller sees its own profile only.
    expect((await call("GET", "/auth/me", { key: b.key })).body.account_id).toBe(b.accountId);

    expect((await call("PATCH", "/auth/me", { key: a.key, body: { slug: "" } })).body.slug).toBeNull();
    expect((await call("PATCH", "/auth/me", { key: b.key, body: { slug } })).body.slug).toBe(slug);
  });

  it("PATCH needs scope full: read_only and payments keys get 403 naming it; GET takes any key; 401 without one", async () => {
    const seller = await newSeller();
    for (const scope of ["read_only", "payments"]) {
      const minted = await call("POST", "/v1/keys", { key: seller.key, body: { scope, name: `profile ${scope}` } });
      expect(minted.status).toBe(201);
      const refused = await call("PATCH", "/auth/me", { key: minted.body.secret, body: { name: "Not allowed" } });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ type: expect.stringMatching(/\/problems\/forbidden$/), needed_scope: "full" });
      expect((await call("GET", "/auth/me", { key: minted.body.secret })).status).toBe(200);
    }
    expect((await call("GET", "/auth/me", { key: seller.key })).body.name).toBeNull();
    expect((await call("GET", "/auth/me")).status).toBe(401);
    expect((await call("PATCH", "/auth/me", { body: { name: "x" } })).status).toBe(401);
  });

  it("refuses verified, unknown fields and values the profile rules refuse with 422 naming each field, changing nothing", async () => {
    const seller = await newSeller();
    const refused = async (body: Record<string, unknown>, field: string) => {
      const r = await call("PATCH", "/auth/me", { key: seller.key, body });
      expect([JSON.stringify(body).slice(0, 80), r.status]).toEqual([JSON.stringify(body).slice(0, 80), 422]);
      expect(r.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      return r;
    };
    const verified = await refused({ verified: true, name: "Ada" }, "verified");
    expect(verified.body.errors).toEqual([{ field: "verified", reason: "is read-only: verification is never self-serve" }]);
    await refused({ nickname: "ada" }, "nickname");
    await refused({ slug: "admin" }, "slug");
    await refused({ slug: "Ada" }, "slug");
    await refused({ slug: "a" }, "slug");
    await refused({ slug: "a".repeat(40) }, "slug");
    await refused({ name: "n".repeat(121) }, "name");
    await refused({ bio: "b".repeat(601) }, "bio");
    await refused({ website_url: `https://example.com/${"a".repeat(2049 - 20)}` }, "website_url");
    await refused({ avatar_url: "javascript:alert(1)" }, "avatar_url");
    await refused({ profile_type: "person" }, "profile_type");
    await refused({ social_links: { github: "not a url" } }, "social_links.github");
    // At the limits, accepted.
    const atLimits = await call("PATCH", "/auth/me", {
      key: seller.key,
      body: {
        slug: freshSlug("limits").padEnd(39, "0"),
        name: "n".repeat(120),
        bio: "b".repeat(600),
        website_url: `https://example.com/${"a".repeat(2048 - 20)}`,
      },
    });
    expect(atLimits.status).toBe(200);
    expect(atLimits.body.slug).toHaveLength(39);
    expect((await profileEvents(seller.key)).map((e) => e.detail.fields)).toEqual([["slug", "name", "bio", "website_url"]]);
  });

  it("each change is one profile.updated row in GET /v1/account/events with its actor (a key, a wallet session); a patch that changes nothing records none", async () => {
    const seller = await newSeller();
    const prefix = seller.key.slice(0, 12);
    const slug = freshSlug("evented");
    expect((await call("PATCH", "/auth/me", { key: seller.key, body: { slug, bio: "Forecasts" } })).status).toBe(200);
    expect((await call("PATCH", "/auth/me", { key: seller.key, body: { slug, bio: "Forecasts", name: null } })).status).toBe(200); // no change
    const session = await walletSession(seller.wallet);
    expect((await call("PATCH", "/auth/me", { key: session, body: { name: "Ada", social_links: { github: "https://github.com/ada" } } })).status).toBe(200);

    const rows = await profileEvents(seller.key);
    expect(rows.map((e) => [e.action, e.object_id, e.actor, e.test_mode, e.detail])).toEqual([
      ["profile.updated", seller.accountId, "wallet", false, { fields: ["name", "social_links"] }],
      ["profile.updated", seller.accountId, `key:${prefix}`, false, { fields: ["slug", "bio"], slug }],
    ]);
    expect(JSON.stringify(rows)).not.toContain("Forecasts");
  });
});
