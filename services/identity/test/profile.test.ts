import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { identityV1 } from "@c402/contracts";
import { migrate } from "@c402/db";
import { newId } from "@c402/ids";
import { assertValidRequest, type CallContext } from "@c402/rpc";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { identityMigrations } from "../src";
import { listAccountEvents } from "../src/domain/account-events";
import { Identity } from "../src/domain/identity";
import { PROFILE_LIMITS, Profiles, RESERVED_SLUGS, type ProfilePatch } from "../src/domain/profile";
import { identityRpc } from "../src/rpc/identity-rpc";
import { identityStore, type IdentityDb } from "../src/store/identity-store";
import { OAuthServer } from "../src/domain/oauth";

/** The seller profile (GET and PATCH /auth/me) on identity's domain and store, against a real database. */
function profileContract(open: () => Promise<TestDatabase>) {
  let ctx: Awaited<ReturnType<typeof open>>;
  let db: IdentityDb;
  let profiles: Profiles;
  let clock = new Date("2026-11-22T10:00:00.000Z");
  const tick = () => (clock = new Date(clock.getTime() + 1000));
  const ACTOR = "key:sk_test_abcd";

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, identityMigrations);
    db = ctx.database.db as IdentityDb;
    profiles = new Profiles(db, () => clock);
  });
  afterAll(() => ctx.close());

  async function newAccount(createdAt = clock): Promise<string> {
    const id = newId("account");
    await identityStore.insertAccount(db, { id, created_at: createdAt });
    return id;
  }

  const patch = (p: Partial<ProfilePatch>): ProfilePatch => ({ set: {}, clear: [], ...p });
  const update = (accountId: string, p: Partial<ProfilePatch>) => profiles.update(accountId, patch(p), ACTOR);
  const events = (accountId: string) => listAccountEvents(db, accountId, { size: 1000, actionPrefix: "profile." });
  /** A slug no other test of this run uses. */
  let n = 0;
  const uniqueSlug = (stem = "seller") => `${stem}-${Date.now().toString(36)}-${n++}`;
  const refusal = (field: string) => ({ slug: "invalid-request", errors: expect.arrayContaining([expect.objectContaining({ field })]) });

  it("a fresh account has a profile: every field null, no links, not verified, dated like the account", async () => {
    const createdAt = new Date("2026-01-02T03:04:05.678Z");
    const accountId = await newAccount(createdAt);
    expect(await profiles.get(accountId)).toEqual({
      account_id: accountId,
      slug: null,
      name: null,
      profile_type: null,
      bio: null,
      avatar_url: null,
      website_url: null,
      social_links: {},
      verified: false,
      created_at: createdAt,
      updated_at: createdAt,
    });
    await expect(profiles.get("acct_NoSuchAccount000000000000")).rejects.toMatchObject({ slug: "not-found" });
    await expect(update("acct_NoSuchAccount000000000000", { set: { name: "x" } })).rejects.toMatchObject({ slug: "not-found" });
  });

  it("changes only the fields sent, answers the whole profile, and keeps the rest", async () => {
    const accountId = await newAccount();
    const slug = uniqueSlug();
    tick();
    const first = await update(accountId, {
      set: { slug, name: "Ada's Weather", profile_type: "company", bio: "Forecasts.\nHourly.", avatar_url: "https://cdn.example/a.png" },
      socialLinks: { github: "https://github.com/ada", x: "https://x.com/ada" },
    });
    expect(first.changed).toEqual(["slug", "name", "profile_type", "bio", "avatar_url", "social_links"]);
    expect(first.profile).toMatchObject({
      account_id: accountId,
      slug,
      name: "Ada's Weather",
      profile_type: "company",
      bio: "Forecasts.\nHourly.",
      avatar_url: "https://cdn.example/a.png",
      website_url: null,
      social_links: { github: "https://github.com/ada", x: "https://x.com/ada" },
      verified: false,
      updated_at: clock,
    });
    tick();
    const second = await update(accountId, { set: { website_url: "http://ada.example/" } });
    expect(second.changed).toEqual(["website_url"]);
    expect(second.profile).toEqual({ ...first.profile, website_url: "http://ada.example/", updated_at: clock });
    expect(await profiles.get(accountId)).toEqual(second.profile);
  });

  it("clears a field named in `clear` (the JSON API's empty string); a field not sent is unchanged; an empty value or a field both set and cleared is refused", async () => {
    const accountId = await newAccount();
    const slug = uniqueSlug();
    await update(accountId, { set: { slug, name: "Ada", bio: "Hi", profile_type: "team", website_url: "https://ada.example" } });
    const cleared = await update(accountId, { clear: ["name", "profile_type", "website_url"] });
    expect(cleared.changed).toEqual(["name", "profile_type", "website_url"]);
    expect(cleared.profile).toMatchObject({ slug, name: null, bio: "Hi", profile_type: null, website_url: null });
    // Clearing what is already clear changes nothing.
    expect((await update(accountId, { clear: ["name"] })).changed).toEqual([]);
    // The slug too: the account gives up its handle, which another account may then take.
    expect((await update(accountId, { clear: ["slug"] })).profile.slug).toBeNull();
    const other = await newAccount();
    expect((await update(other, { set: { slug } })).profile.slug).toBe(slug);

    await expect(update(accountId, { set: { name: "" } })).rejects.toMatchObject(refusal("name"));
    await expect(update(accountId, { set: { bio: "x" }, clear: ["bio"] })).rejects.toMatchObject(refusal("bio"));
    await expect(update(accountId, { clear: ["verified"] })).rejects.toMatchObject(refusal("verified"));
    await expect(update(accountId, { clear: ["social_links"] })).rejects.toMatchObject(refusal("social_links"));
    expect((await profiles.get(accountId)).bio).toBe("Hi");
  });

  it("accepts each length limit at its boundary and refuses one over, naming the field", async () => {
    const accountId = await newAccount();
    const url = (length: number) => `https://example.com/${"a".repeat(length - "https://example.com/".length)}`;
    const links = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`net${i}`, `https://example.com/${i}`]));
    const cases: [string, Partial<ProfilePatch>, Partial<ProfilePatch>][] = [
      ["name", { set: { name: "n".repeat(120) } }, { set: { name: "n".repeat(121) } }],
      // Characters, not UTF-16 units: 120 emoji are a name of 120 characters.
      ["name", { set: { name: "\u{1F600}".repeat(120) } }, { set: { name: "\u{1F600}".repeat(121) } }],
      ["bio", { set: { bio: "b".repeat(600) } }, { set: { bio: "b".repeat(601) } }],
      ["avatar_url", { set: { avatar_url: url(2048) } }, { set: { avatar_url: url(2049) } }],
      ["website_url", { set: { website_url: url(2048) } }, { set: { website_url: url(2049) } }],
      ["slug", { set: { slug: `${uniqueSlug("s")}`.padEnd(39, "9") } }, { set: { slug: "s".repeat(40) } }],
      ["slug", { set: { slug: `q${n++ % 10}` } }, { set: { slug: "q" } }],
      ["social_links", { socialLinks: links(20) }, { socialLinks: links(21) }],
      [
        `social_links.${"n".repeat(41)}`,
        { socialLinks: { ["n".repeat(40)]: "https://example.com" } },
        { socialLinks: { ["n".repeat(41)]: "https://example.com" } },
      ],
      ["social_links.github", { socialLinks: { github: url(2048) } }, { socialLinks: { github: url(2049) } }],
    ];
    expect(PROFILE_LIMITS).toMatchObject({ nameMax: 120, bioMax: 600, urlMax: 2048, socialLinksMax: 20, socialLinkNameMax: 40 });
    for (const [field, atLimit, over] of cases) {
      await expect(update(accountId, atLimit)).resolves.toMatchObject({ changed: expect.any(Array) });
      await expect(update(accountId, over)).rejects.toMatchObject(refusal(field));
    }
  });

  it.each([
    ["uppercase", "Ada"],
    ["a leading hyphen", "-ada"],
    ["an underscore", "ada_w"],
    ["a dot", "ada.w"],
    ["a space", "ada w"],
    ["a letter outside ASCII", "adé"],
    ["one character", "a"],
  ])("refuses a slug with %s", async (_what, slug) => {
    const accountId = await newAccount();
    await expect(update(accountId, { set: { slug } })).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [{ field: "slug", reason: expect.stringContaining("^[a-z0-9][a-z0-9-]{1,38}$") }],
    });
  });

  it("refuses every reserved word as a slug", async () => {
    const accountId = await newAccount();
    for (const word of ["admin", "api", "app", "auth", "v1", "docs", "help", "login", "logout", "mcp", "oauth", "pay", "schedule", "settings"]) {
      expect(RESERVED_SLUGS.has(word)).toBe(true);
    }
    for (const word of ["static", "support", "www", "c402", "well-known", "by-tx", "c", "e", "x", "r", "u"]) expect(RESERVED_SLUGS.has(word)).toBe(true);
    for (const word of RESERVED_SLUGS) {
      await expect(update(accountId, { set: { slug: word } })).rejects.toMatchObject({
        slug: "invalid-request",
        errors: [expect.objectContaining({ field: "slug" })],
      });
    }
    await expect(update(accountId, { set: { slug: "admin" } })).rejects.toMatchObject({
      errors: [{ field: "slug", reason: expect.stringContaining("reserved") }],
    });
    // A reserved word inside a longer slug is an ordinary slug.
    expect((await update(accountId, { set: { slug: uniqueSlug("admin-weather") } })).changed).toEqual(["slug"]);
  });

  it.each([
    ["a relative URL", "/avatar.png"],
    ["a scheme other than http(s)", "ftp://example.com/a.png"],
    ["javascript:", "javascript:alert(1)"],
    ["data:", "data:image/png;base64,AAAA"],
    ["a user name and password", "https://user:secret@example.com/"],
    ["a space", "https://example.com/a b.png"],
    ["leading whitespace", " https://example.com/"],
    ["no host", "https://"],
  ])("refuses %s as a profile URL, in avatar_url, website_url and social_links", async (_what, value) => {
    const accountId = await newAccount();
    await expect(update(accountId, { set: { avatar_url: value } })).rejects.toMatchObject(refusal("avatar_url"));
    await expect(update(accountId, { set: { website_url: value } })).rejects.toMatchObject(refusal("website_url"));
    await expect(update(accountId, { socialLinks: { site: value } })).rejects.toMatchObject(refusal("social_links.site"));
  });

  it("refuses a profile_type outside individual, team, company, and control characters in a name or a bio (line breaks are fine in a bio)", async () => {
    const accountId = await newAccount();
    for (const type of ["individual", "team", "company"] as const) {
      expect((await update(accountId, { set: { profile_type: type } })).profile.profile_type).toBe(type);
    }
    await expect(update(accountId, { set: { profile_type: "person" as "team" } })).rejects.toMatchObject(refusal("profile_type"));
    await expect(update(accountId, { set: { name: "Ada\nLovelace" } })).rejects.toMatchObject(refusal("name"));
    await expect(update(accountId, { set: { bio: "a\u0007b" } })).rejects.toMatchObject(refusal("bio"));
    expect((await update(accountId, { set: { bio: "line one\r\nline two\tend" } })).profile.bio).toBe("line one\r\nline two\tend");
    await expect(update(accountId, { socialLinks: { "": "https://example.com" } })).rejects.toMatchObject(refusal("social_links."));
    // A JSON object can carry a `__proto__` member of its own: it is refused like any other malformed name.
    const proto = JSON.parse('{"__proto__": "https://example.com"}') as Record<string, string>;
    await expect(update(accountId, { socialLinks: proto })).rejects.toMatchObject(refusal("social_links.__proto__"));
  });

  it("replaces social_links wholesale when sent, keeps them when not, and `{}` removes them all", async () => {
    const accountId = await newAccount();
    await update(accountId, { socialLinks: { github: "https://github.com/ada", x: "https://x.com/ada" } });
    const replaced = await update(accountId, { socialLinks: { mastodon: "https://mastodon.social/@ada" } });
    expect(replaced.profile.social_links).toEqual({ mastodon: "https://mastodon.social/@ada" });
    expect((await update(accountId, { set: { name: "Ada" } })).profile.social_links).toEqual({ mastodon: "https://mastodon.social/@ada" });
    // The same links again (in any order) change nothing.
    expect((await update(accountId, { socialLinks: { mastodon: "https://mastodon.social/@ada" } })).changed).toEqual([]);
    const emptied = await update(accountId, { socialLinks: {} });
    expect(emptied.changed).toEqual(["social_links"]);
    expect(emptied.profile.social_links).toEqual({});
    expect((await profiles.get(accountId)).social_links).toEqual({});
  });

  it("a slug another account holds is 409 conflict; taking one's own slug again changes nothing", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const slug = uniqueSlug();
    await update(a, { set: { slug } });
    await expect(update(b, { set: { slug, name: "B" } })).rejects.toMatchObject({ slug: "conflict", errors: [{ field: "slug", reason: "is taken" }] });
    // Nothing of the refused change was written, and nothing recorded.
    expect(await profiles.get(b)).toMatchObject({ slug: null, name: null });
    expect(await events(b)).toEqual([]);
    expect((await update(a, { set: { slug } })).changed).toEqual([]);
  });

  it("two accounts racing for one slug: exactly one gets it, the other gets 409", async () => {
    const slug = uniqueSlug("race");
    for (let round = 0; round < 3; round++) {
      const racers = await Promise.all([newAccount(), newAccount(), newAccount()]);
      const wanted = `${slug}-${round}`;
      const results = await Promise.allSettled(racers.map((id) => update(id, { set: { slug: wanted } })));
      const won = results.filter((r) => r.status === "fulfilled");
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      expect(won).toHaveLength(1);
      expect(lost.map((r) => (r.reason as { slug: string }).slug)).toEqual(["conflict", "conflict"]);
      const holders = (await Promise.all(racers.map((id) => profiles.get(id)))).filter((p) => p.slug === wanted);
      expect(holders).toHaveLength(1);
      expect((await Promise.all(racers.map(events))).flat()).toHaveLength(1);
    }
  });

  it("records one profile.updated event per changing patch (the changed fields' names, the new slug when it changed), and none for a patch that changes nothing", async () => {
    const accountId = await newAccount();
    const slug = uniqueSlug();
    tick();
    await update(accountId, { set: { slug, bio: "secret plans? no, just a bio" }, socialLinks: { github: "https://github.com/ada" } });
    tick();
    await update(accountId, { set: { slug, bio: "secret plans? no, just a bio" } }); // no change
    await update(accountId, {}); // nothing sent
    tick();
    await update(accountId, { set: { name: "Ada" } });
    tick();
    await update(accountId, { clear: ["slug"] });
    const rows = await events(accountId);
    expect(rows.map((e) => [e.action, e.object_id, e.actor, e.test_mode, e.detail])).toEqual([
      ["profile.updated", accountId, ACTOR, false, { fields: ["slug"], slug: null }],
      ["profile.updated", accountId, ACTOR, false, { fields: ["name"] }],
      ["profile.updated", accountId, ACTOR, false, { fields: ["slug", "bio", "social_links"], slug }],
    ]);
    expect(rows[0]!.at).toEqual(clock);
    // The event names fields, never their values (a bio or a link stays on the profile).
    expect(JSON.stringify(rows)).not.toContain("just a bio");
    expect(JSON.stringify(rows)).not.toContain("github.com");
    // A refused patch records nothing.
    await expect(update(accountId, { set: { name: "n".repeat(121) } })).rejects.toMatchObject({ slug: "invalid-request" });
    expect(await events(accountId)).toHaveLength(3);
  });

  it("keeps each account's profile to itself", async () => {
    const a = await newAccount();
    const b = await newAccount();
    await update(a, { set: { name: "A", slug: uniqueSlug() }, socialLinks: { github: "https://github.com/a" } });
    await update(b, { set: { name: "B" } });
    await update(b, { clear: ["name"], socialLinks: {} });
    expect(await profiles.get(a)).toMatchObject({ account_id: a, name: "A", social_links: { github: "https://github.com/a" } });
    expect(await profiles.get(b)).toMatchObject({ account_id: b, name: null, slug: null, social_links: {} });
    expect((await events(a)).every((e) => e.object_id === a)).toBe(true);
    expect((await events(b)).every((e) => e.object_id === b)).toBe(true);
  });

  it("verified is never self-serve: no patch field can set it, and an operator's verification survives the seller's changes", async () => {
    expect(identityV1.UpdateProfileRequestSchema.fields.map((f) => f.name)).not.toContain("verified");
    const accountId = await newAccount();
    await update(accountId, { set: { name: "Ada" } });
    await db.updateTable("profiles").set({ verified: true }).where("account_id", "=", accountId).execute();
    const after = await update(accountId, { set: { name: "Ada L." }, clear: ["bio"], socialLinks: {} });
    expect(after.profile.verified).toBe(true);
  });

  it("resolves a public slug to its profile (GetPublicProfile); a slug nobody holds, one given up, or text that cannot be a slug is not-found", async () => {
    const accountId = await newAccount();
    const other = await newAccount();
    const slug = uniqueSlug("public");
    await update(accountId, { set: { slug, name: "Ada's Weather" } });
    await update(other, { set: { name: "No slug" } });
    const rpc = identityRpc(
      new Identity(db, { baseUrl: "http://127.0.0.1:4020", challengeTtlSeconds: 600 }),
      db,
      new OAuthServer(db, { baseUrl: "http://127.0.0.1:4020" }),
      profiles,
    );
    const call = {} as CallContext;
    const found = await rpc.getPublicProfile(create(identityV1.GetPublicProfileRequestSchema, { slug }), call);
    expect(found.profile).toMatchObject({ accountId, slug, name: "Ada's Weather" });
    for (const text of [uniqueSlug("nobody"), "Not-A-Slug", "x", "admin", "a".repeat(64), "seller\u0000x", `${slug} `]) {
      await expect(profiles.bySlug(text)).rejects.toMatchObject({ slug: "not-found" });
    }
    // Given up, the slug resolves to nobody; taken by another account, it resolves to that one.
    await update(accountId, { clear: ["slug"] });
    await expect(profiles.bySlug(slug)).rejects.toMatchObject({ slug: "not-found" });
    await update(other, { set: { slug } });
    expect((await profiles.bySlug(slug)).account_id).toBe(other);
    // The contract bounds the slug before identity sees it.
    expect(() => assertValidRequest(identityV1.GetPublicProfileRequestSchema, create(identityV1.GetPublicProfileRequestSchema, { slug: "" }))).toThrow(
      expect.objectContaining({ slug: "invalid-request" }),
    );
  });

  it("the RPC maps a patch both ways: set, clear, profile_type and social_links in; the whole profile and the changed fields out", async () => {
    const accountId = await newAccount();
    const rpc = identityRpc(
      new Identity(db, { baseUrl: "http://127.0.0.1:4020", challengeTtlSeconds: 600 }),
      db,
      new OAuthServer(db, { baseUrl: "http://127.0.0.1:4020" }),
      profiles,
    );
    const call = {} as CallContext;
    const slug = uniqueSlug();
    const req = create(identityV1.UpdateProfileRequestSchema, {
      accountId,
      slug,
      name: "Ada",
      profileType: identityV1.ProfileType.INDIVIDUAL,
      socialLinks: { links: { github: "https://github.com/ada" } },
      actor: "wallet",
    });
    assertValidRequest(identityV1.UpdateProfileRequestSchema, req);
    const answer = await rpc.updateProfile(req, call);
    expect(answer.changed).toEqual(["slug", "name", "profile_type", "social_links"]);
    expect(answer.profile).toMatchObject({
      accountId,
      slug,
      name: "Ada",
      profileType: identityV1.ProfileType.INDIVIDUAL,
      socialLinks: { links: { github: "https://github.com/ada" } },
      verified: false,
    });
    const cleared = await rpc.updateProfile(
      create(identityV1.UpdateProfileRequestSchema, { accountId, clear: ["name", "profile_type"], socialLinks: {}, actor: "wallet" }),
      call,
    );
    expect(cleared.changed).toEqual(["name", "profile_type", "social_links"]);
    const got = (await rpc.getProfile(create(identityV1.GetProfileRequestSchema, { accountId }), call)).profile!;
    expect(got.name).toBeUndefined();
    expect(got.profileType).toBe(identityV1.ProfileType.UNSPECIFIED);
    expect(got.socialLinks?.links).toEqual({});
    expect(got.slug).toBe(slug);
    expect(got.updatedAt).toEqual(timestampFromDate(clock));
    // The contract refuses a `clear` naming anything else, before identity sees it.
    expect(() =>
      assertValidRequest(
        identityV1.UpdateProfileRequestSchema,
        create(identityV1.UpdateProfileRequestSchema, { accountId, clear: ["verified"], actor: "wallet" }),
      ),
    ).toThrow(expect.objectContaining({ slug: "invalid-request" }));
    await expect(rpc.updateProfile(create(identityV1.UpdateProfileRequestSchema, { accountId, name: "x", actor: "nobody" }), call)).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [{ field: "actor" }],
    });
  });
}

describeOnEachDatabase("seller profile", "identity", profileContract);
