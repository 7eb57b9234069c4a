import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { identityV1 } from "@c402/contracts";
import { invalid, ProblemError } from "@c402/problems";
import { ACCOUNT_ID, bodyOf, recorded, resolveCredential, SELLER_KEY, servers } from "../support/fake-gateway";

/** GET and PATCH /auth/me (routes/profile.ts). */

const serve = servers();
const auth = { authorization: `Bearer ${SELLER_KEY}` };
const SESSION_TOKEN = "sess_0123456789abcdefABCDEF0123456789";
const CREATED = new Date("2026-01-02T03:04:05.000Z");
const UPDATED = new Date("2026-02-03T04:05:06.000Z");

function profile(init: Omit<MessageInitShape<typeof identityV1.ProfileSchema>, "$typeName"> = {}) {
  return create(identityV1.ProfileSchema, {
    accountId: ACCOUNT_ID,
    socialLinks: { links: {} },
    createdAt: timestampFromDate(CREATED),
    updatedAt: timestampFromDate(CREATED),
    ...(init as object),
  });
}

const FILLED = {
  slug: "ada-weather",
  name: "Ada's Weather",
  profileType: identityV1.ProfileType.COMPANY,
  bio: "Forecasts, hourly.",
  avatarUrl: "https://cdn.example/ada.png",
  websiteUrl: "https://ada.example",
  socialLinks: { links: { github: "https://github.com/ada" } },
  verified: true,
  updatedAt: timestampFromDate(UPDATED),
};

/** Identity fakes: the key (of `scope`) or a wallet session resolves; profile calls answer `answer` or throw `failure`. */
function profileFakes(opts: { scope?: identityV1.Scope; answer?: identityV1.Profile; failure?: Error } = {}) {
  const asKey = resolveCredential(opts.scope ?? identityV1.Scope.FULL);
  const answer = async () => {
    if (opts.failure) throw opts.failure;
    return { profile: opts.answer ?? profile(FILLED) };
  };
  return recorded({
    identity: {
      resolveCredential: async (req) =>
        req.secret === SESSION_TOKEN
          ? create(identityV1.ResolveCredentialResponseSchema, {
              accountId: ACCOUNT_ID,
              keyId: "ses_Session00000000000000000",
              keyPrefix: SESSION_TOKEN.slice(0, 12),
              scope: identityV1.Scope.FULL,
              mode: identityV1.KeyMode.TEST,
              kind: identityV1.CredentialKind.SESSION,
              actor: "wallet",
            })
          : asKey(req),
      getProfile: async () => create(identityV1.GetProfileResponseSchema, await answer()),
      updateProfile: async () => create(identityV1.UpdateProfileResponseSchema, await answer()),
    },
  });
}

const patch = (url: string, body: unknown, headers: Record<string, string> = auth) =>
  fetch(`${url}/auth/me`, {
    method: "PATCH",
    headers: { ...headers, "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("GET /auth/me", () => {
  it("answers the full profile record of the credential's account (a read_only key suffices)", async () => {
    const { fakes, of, called } = profileFakes({ scope: identityV1.Scope.READ_ONLY });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/auth/me`, { headers: auth });
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toEqual({
      object: "profile",
      account_id: ACCOUNT_ID,
      slug: "ada-weather",
      name: "Ada's Weather",
      profile_type: "company",
      bio: "Forecasts, hourly.",
      avatar_url: "https://cdn.example/ada.png",
      website_url: "https://ada.example",
      social_links: { github: "https://github.com/ada" },
      verified: true,
      created_at: CREATED.toISOString(),
      updated_at: UPDATED.toISOString(),
    });
    expect(of("getProfile")).toEqual([{ accountId: ACCOUNT_ID }]);
    expect(called()).toEqual(["identity.resolveCredential", "identity.getProfile"]);
  });

  it("a profile never changed: null fields, no links, not verified", async () => {
    const { fakes } = profileFakes({ answer: profile() });
    const { url } = await serve.app(fakes);
    expect(await bodyOf(await fetch(`${url}/auth/me`, { headers: auth }))).toEqual({
      object: "profile",
      account_id: ACCOUNT_ID,
      slug: null,
      name: null,
      profile_type: null,
      bio: null,
      avatar_url: null,
      website_url: null,
      social_links: {},
      verified: false,
      created_at: CREATED.toISOString(),
      updated_at: CREATED.toISOString(),
    });
  });

  it("401 without a credential, asking identity nothing", async () => {
    const { fakes, called } = profileFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/auth/me`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(called()).toEqual([]);
  });
});

describe("PATCH /auth/me", () => {
  it('maps the body to identity: a value sets, "" clears, null keeps; the account and the actor come from the credential; answers the updated profile', async () => {
    const { fakes, of } = profileFakes();
    const { url } = await serve.app(fakes);
    const res = await patch(url, {
      slug: "ada-weather",
      name: "",
      profile_type: "company",
      bio: null,
      avatar_url: "https://cdn.example/ada.png",
      website_url: "",
      social_links: { github: "https://github.com/ada" },
    });
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toMatchObject({ object: "profile", slug: "ada-weather", profile_type: "company", verified: true });
    expect(of("updateProfile")).toEqual([
      {
        accountId: ACCOUNT_ID,
        slug: "ada-weather",
        avatarUrl: "https://cdn.example/ada.png",
        profileType: identityV1.ProfileType.COMPANY,
        socialLinks: { links: { github: "https://github.com/ada" } },
        clear: ["name", "website_url"],
        actor: "key:sk_test_abcd",
      },
    ]);
  });

  it('sends social_links {} as "remove every link", null as "keep them", and profile_type "" as a clear', async () => {
    const { fakes, of } = profileFakes();
    const { url } = await serve.app(fakes);
    expect((await patch(url, { social_links: {} })).status).toBe(200);
    expect((await patch(url, { social_links: null, profile_type: "" })).status).toBe(200);
    expect((await patch(url, {})).status).toBe(200);
    expect(of("updateProfile")).toEqual([
      { accountId: ACCOUNT_ID, socialLinks: { links: {} }, clear: [], actor: "key:sk_test_abcd" },
      { accountId: ACCOUNT_ID, clear: ["profile_type"], actor: "key:sk_test_abcd" },
      { accountId: ACCOUNT_ID, clear: [], actor: "key:sk_test_abcd" },
    ]);
  });

  it("a wallet session may change the profile, named `wallet` as the actor", async () => {
    const { fakes, of } = profileFakes();
    const { url } = await serve.app(fakes);
    expect((await patch(url, { name: "Ada" }, { authorization: `Bearer ${SESSION_TOKEN}` })).status).toBe(200);
    expect(of("updateProfile")).toEqual([{ accountId: ACCOUNT_ID, name: "Ada", clear: [], actor: "wallet" }]);
  });

  it.each([
    ["read_only", identityV1.Scope.READ_ONLY],
    ["payments", identityV1.Scope.PAYMENTS],
  ])("refuses a %s key with 403 naming scope full, and changes nothing", async (_name, scope) => {
    const { fakes, called } = profileFakes({ scope });
    const { url } = await serve.app(fakes);
    const res = await patch(url, { name: "Ada" });
    expect(res.status).toBe(403);
    expect(await bodyOf(res)).toMatchObject({ needed_scope: "full", detail: { message: expect.stringContaining("`full`") } });
    expect(called()).toEqual(["identity.resolveCredential"]);
  });

  it("401 without a credential, before the body is read", async () => {
    const { fakes, called } = profileFakes();
    const { url } = await serve.app(fakes);
    expect((await patch(url, { verified: true }, {})).status).toBe(401);
    expect(called()).toEqual([]);
  });

  it("refuses unknown fields, verified and the record's other read-only fields, and wrong types with 422 naming each, asking identity nothing", async () => {
    const { fakes, called } = profileFakes();
    const { url } = await serve.app(fakes);
    const res = await patch(url, {
      verified: true,
      nickname: "ada",
      created_at: "2026-01-01T00:00:00Z",
      name: 7,
      social_links: { github: 1 },
      profile_type: "person",
    });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const { errors } = (await bodyOf(res)) as { errors: { field: string; reason: string }[] };
    expect(errors).toEqual(
      expect.arrayContaining([
        { field: "verified", reason: "is read-only: verification is never self-serve" },
        { field: "created_at", reason: "is read-only" },
        { field: "nickname", reason: "is not a known field" },
        expect.objectContaining({ field: "name" }),
        expect.objectContaining({ field: "social_links.github" }),
        expect.objectContaining({ field: "profile_type" }),
      ]),
    );
    expect(errors.filter((e) => e.field === "verified")).toHaveLength(1);
    for (const body of [{ verified: false }, [], { social_links: ["https://x.com/ada"] }, { slug: 42 }]) {
      expect((await patch(url, body)).status).toBe(422);
    }
    expect(called().filter((c) => c !== "identity.resolveCredential")).toEqual([]);
  });

  it("passes on identity's answers: 409 for a taken slug, 422 naming the field a rule refuses", async () => {
    const taken = profileFakes({
      failure: new ProblemError("conflict", { message: "The slug ada is taken by another account.", errors: [{ field: "slug", reason: "is taken" }] }),
    });
    const { url } = await serve.app(taken.fakes);
    const conflict = await patch(url, { slug: "ada" });
    expect(conflict.status).toBe(409);
    expect(await bodyOf(conflict)).toMatchObject({ type: expect.stringMatching(/\/problems\/conflict$/), errors: [{ field: "slug", reason: "is taken" }] });

    const refused = profileFakes({ failure: invalid([{ field: "slug", reason: "is a reserved word; choose another" }]) });
    const other = await serve.app(refused.fakes);
    const res = await patch(other.url, { slug: "admin" });
    expect(res.status).toBe(422);
    expect(await bodyOf(res)).toMatchObject({ errors: [{ field: "slug", reason: "is a reserved word; choose another" }] });
  });
});
