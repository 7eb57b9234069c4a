import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { MemoryCache } from "@c402/cache";
import { identityV1 } from "@c402/contracts";
import { createLogger } from "@c402/logging";
import { ProblemError } from "@c402/problems";
import { createGatewayApp } from "../../src/index";
import { MAGIC_LINK_LIMITS } from "../../src/http/routes/magic-link";
import { ACCOUNT_ID, BASE_URL, bodyOf, fakeClients, recorded, resolveCredential, SELLER_KEY, servers, SITE_URL, type Fakes } from "../support/fake-gateway";

/** Magic-link sign-in, the session cookie, and cookie authentication with its CSRF check (routes/magic-link.ts, http/session-cookie.ts, http/auth.ts). */

const serve = servers();
const SESSION_TOKEN = "sess_0123456789abcdefABCDEF0123456789";
const SESSION_ID = "ses_Session00000000000000000";
const LINK_TOKEN = `ml_${"L".repeat(43)}`;
const EXPIRES = new Date(Date.now() + 24 * 3600 * 1000);

/** A cookie's Max-Age is what is left of the session when it was answered (a loaded machine may take seconds to get there). */
function expectLifetimeOfSession(maxAge: string | undefined, sent: number, answered: number): void {
  expect(Number(maxAge)).toBeGreaterThanOrEqual(Math.floor((EXPIRES.getTime() - answered) / 1000));
  expect(Number(maxAge)).toBeLessThanOrEqual(Math.ceil((EXPIRES.getTime() - sent) / 1000));
}
const ENDED_AT = new Date("2025-03-04T05:06:07.000Z");

function signInFakes(returnTo?: string) {
  const asKey = resolveCredential();
  return recorded({
    identity: {
      requestMagicLink: async (req) =>
        create(identityV1.RequestMagicLinkResponseSchema, {
          email: (req.email ?? "").trim().toLowerCase(),
          expiresAt: timestampFromDate(new Date("2025-03-01T00:15:00.000Z")),
          expiresInSeconds: 900,
        }),
      verifyMagicLink: async (req) => {
        if (req.token !== LINK_TOKEN) throw new ProblemError("unauthenticated", "This sign-in link is unknown, already used or expired.");
        return create(identityV1.VerifyMagicLinkResponseSchema, {
          account: { id: ACCOUNT_ID },
          accountCreated: true,
          session: { token: SESSION_TOKEN, expiresAt: timestampFromDate(EXPIRES) },
          ...(returnTo !== undefined ? { returnTo } : {}),
        });
      },
      resolveCredential: async (req) =>
        req.secret === SESSION_TOKEN
          ? create(identityV1.ResolveCredentialResponseSchema, {
              accountId: ACCOUNT_ID,
              keyId: SESSION_ID,
              keyPrefix: SESSION_TOKEN.slice(0, 12),
              scope: identityV1.Scope.FULL,
              mode: identityV1.KeyMode.TEST,
              kind: identityV1.CredentialKind.SESSION,
              actor: "session",
              expiresAt: timestampFromDate(EXPIRES),
            })
          : asKey(req),
      endSession: async () => create(identityV1.EndSessionResponseSchema, { endedAt: timestampFromDate(ENDED_AT) }),
      listApiKeys: async () => create(identityV1.ListApiKeysResponseSchema, { apiKeys: [] }),
    },
  });
}

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});
const cookie = (token = SESSION_TOKEN) => ({ cookie: `theme=dark; c402_session=${token}; other=1` });

/** The cookie attributes of a Set-Cookie line, by lowercase name. */
function attributesOf(line: string): Record<string, string> {
  const [pair = "", ...attrs] = line.split(";").map((s) => s.trim());
  const eq = pair.indexOf("=");
  return Object.fromEntries([
    ["name", pair.slice(0, eq)],
    ["value", pair.slice(eq + 1)],
    ...attrs.map((a) => {
      const i = a.indexOf("=");
      return i < 0 ? [a.toLowerCase(), ""] : [a.slice(0, i).toLowerCase(), a.slice(i + 1)];
    }),
  ]);
}

/** The gateway on a given base URL (the cookie's Secure attribute and the CSRF origin come from it). */
async function serveAt(baseUrl: string, fakes: Fakes) {
  const app = createGatewayApp({
    clients: fakeClients(fakes),
    cache: new MemoryCache(),
    logger: createLogger({ service: "gateway-test", level: "silent" }),
    settings: { serviceName: "c402", version: "0.0.0", runMode: "embedded", authRateLimitPerMinute: 30, baseUrl, siteUrl: SITE_URL },
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe("POST /auth/magic-link/request", () => {
  it("asks identity to mail the link and answers the same shape for any address, metered", async () => {
    const { fakes, of } = signInFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/auth/magic-link/request`, json({ email: " Ada@Example.com ", return_to: "/auth/me" }));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe(String(MAGIC_LINK_LIMITS.perAddress));
    expect(await bodyOf(res)).toEqual({
      object: "magic_link",
      sent: true,
      email: "ada@example.com",
      expires_at: "2025-03-01T00:15:00.000Z",
      expires_in_seconds: 900,
      note: expect.any(String),
    });
    expect(of("requestMagicLink")).toEqual([{ email: " Ada@Example.com ", returnTo: "/auth/me" }]);
  });

  it("refuses a body without an email, with a non-address, an overlong one or an unknown field (422), asking identity nothing", async () => {
    const { fakes, called } = signInFakes();
    const { url } = await serve.app(fakes);
    for (const [body, field] of [
      [{}, "email"],
      [{ email: "not an address" }, "email"],
      [{ email: `${"a".repeat(250)}@example.com` }, "email"],
      [{ email: "ada@example.com", return_to: 5 }, "return_to"],
      [{ email: "ada@example.com", admin: true }, "admin"],
    ] as const) {
      const res = await fetch(`${url}/auth/magic-link/request`, json(body));
      expect([body, res.status]).toEqual([body, 422]);
      expect((await bodyOf(res)).errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    }
    expect(called()).toEqual([]);
  });

  it("limits links per address (however it is spelled) with 429 and Retry-After, before identity is asked", async () => {
    const { fakes, of } = signInFakes();
    const { url } = await serve.app(fakes);
    const spellings = ["ada@example.com", "ADA@example.com", " ada@EXAMPLE.com", "Ada@Example.Com", "ada@example.com"];
    for (const email of spellings) expect((await fetch(`${url}/auth/magic-link/request`, json({ email }))).status).toBe(200);
    const over = await fetch(`${url}/auth/magic-link/request`, json({ email: "ada@example.com" }));
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await bodyOf(over)).type).toBe(`${SITE_URL}/problems/rate-limited`);
    expect(of("requestMagicLink")).toHaveLength(MAGIC_LINK_LIMITS.perAddress);
    // Another address is counted apart.
    expect((await fetch(`${url}/auth/magic-link/request`, json({ email: "grace@example.com" }))).status).toBe(200);
  });

  it("limits sign-in requests per client address", async () => {
    const { fakes } = signInFakes();
    const { url } = await serve.app(fakes);
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await fetch(`${url}/auth/magic-link/request`, json({ email: `s${i}@example.com` }))).status);
    expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true);
    expect(statuses[30]).toBe(429);
  });
});

describe("verifying a link", () => {
  it("POST /auth/verify answers the session once and sets it as an HttpOnly, Secure, SameSite=Lax cookie", async () => {
    const { fakes, of } = signInFakes("/auth/me");
    const { url } = await serve.app(fakes);
    const sent = Date.now();
    const res = await fetch(`${url}/auth/verify`, json({ token: LINK_TOKEN }));
    const answered = Date.now();
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await bodyOf(res)).toEqual({
      object: "session",
      account: { id: ACCOUNT_ID, created: true },
      session: { token: SESSION_TOKEN, expires_at: EXPIRES.toISOString(), cookie: "c402_session", note: expect.any(String) },
      return_to: "/auth/me",
    });
    const cookies = res.headers.getSetCookie();
    expect(cookies).toHaveLength(1);
    const c = attributesOf(cookies[0]!);
    expect(c).toMatchObject({ name: "c402_session", value: SESSION_TOKEN, path: "/", httponly: "", secure: "", samesite: "Lax" });
    expectLifetimeOfSession(c["max-age"], sent, answered);
    expect(of("verifyMagicLink")).toEqual([{ token: LINK_TOKEN }]);
  });

  it("GET /auth/verify?token= sets the cookie and redirects (303) to the path the link was asked with", async () => {
    const { fakes } = signInFakes("/v1/checkouts?limit=5");
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/auth/verify?token=${LINK_TOKEN}`, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/v1/checkouts?limit=5");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(attributesOf(res.headers.getSetCookie()[0] ?? "")).toMatchObject({ name: "c402_session", value: SESSION_TOKEN, httponly: "" });
  });

  it("never redirects off the site, whatever the link carries: /auth/me instead", async () => {
    for (const returnTo of ["//evil.example", "/\\evil.example", "https://evil.example/", "/\t/evil.example", "javascript:alert(1)"]) {
      const { fakes } = signInFakes(returnTo);
      const { url } = await serve.app(fakes);
      const res = await fetch(`${url}/auth/verify?token=${LINK_TOKEN}`, { redirect: "manual" });
      expect([returnTo, res.status, res.headers.get("location")]).toEqual([returnTo, 303, "/auth/me"]);
    }
    const { fakes } = signInFakes();
    const { url } = await serve.app(fakes);
    expect((await fetch(`${url}/auth/verify?token=${LINK_TOKEN}`, { redirect: "manual" })).headers.get("location")).toBe("/auth/me");
  });

  it("a refused link is 401 and sets no cookie; a missing or repeated token is 422", async () => {
    const { fakes } = signInFakes();
    const { url } = await serve.app(fakes);
    for (const res of [
      await fetch(`${url}/auth/verify?token=ml_unknown`, { redirect: "manual" }),
      await fetch(`${url}/auth/verify`, json({ token: "ml_unknown" })),
    ]) {
      expect(res.status).toBe(401);
      expect(res.headers.getSetCookie()).toEqual([]);
    }
    for (const query of ["", "?token=", `?token=${LINK_TOKEN}&token=${LINK_TOKEN}`, `?token=${"x".repeat(257)}`]) {
      const res = await fetch(`${url}/auth/verify${query}`, { redirect: "manual" });
      expect([query, res.status]).toEqual([query, 422]);
      expect((await bodyOf(res)).errors).toEqual([expect.objectContaining({ field: "token" })]);
    }
  });

  it("on a loopback http base URL the cookie is not Secure (it would never come back); elsewhere it is", async () => {
    const { fakes } = signInFakes();
    const local = await serveAt("http://127.0.0.1:4020", fakes);
    const remote = await serveAt("http://pay.example", fakes);
    try {
      const localCookie = (await fetch(`${local.url}/auth/verify`, json({ token: LINK_TOKEN }))).headers.getSetCookie()[0] ?? "";
      expect(attributesOf(localCookie)).not.toHaveProperty("secure");
      expect(attributesOf(localCookie)).toMatchObject({ httponly: "", samesite: "Lax", path: "/" });
      const remoteCookie = (await fetch(`${remote.url}/auth/verify`, json({ token: LINK_TOKEN }))).headers.getSetCookie()[0] ?? "";
      expect(attributesOf(remoteCookie)).toHaveProperty("secure");
    } finally {
      await local.close();
      await remote.close();
    }
  });
});

describe("the session cookie as a credential", () => {
  it("is accepted wherever a key is; the Authorization header wins when both are sent", async () => {
    const { fakes, of } = signInFakes();
    const { url } = await serve.app(fakes);
    expect((await fetch(`${url}/v1/keys`, { headers: cookie() })).status).toBe(200);
    // Presented at the REST API (identityV1.Audience.REST): where an OAuth token would have to reach.
    expect(of("resolveCredential")).toEqual([{ secret: SESSION_TOKEN, audience: 1 }]);
    expect((await fetch(`${url}/v1/keys`, { headers: { ...cookie(), authorization: `Bearer ${SELLER_KEY}` } })).status).toBe(200);
    expect(of("resolveCredential")[1]).toEqual({ secret: SELLER_KEY, audience: 1 });
  });

  it("holds only a session: a key in the cookie is 401 without asking identity", async () => {
    const { fakes, called } = signInFakes();
    const { url } = await serve.app(fakes);
    for (const value of [SELLER_KEY, "", "sess_short"]) expect((await fetch(`${url}/v1/keys`, { headers: cookie(value) })).status).toBe(401);
    expect(called()).toEqual([]);
  });

  it("a write by cookie must come from this site: cross-site and same-site are 403 before anything is resolved", async () => {
    const { fakes, called } = signInFakes();
    const { url } = await serve.app(fakes);
    const refused: Record<string, string>[] = [
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "cross-site", origin: BASE_URL },
      { origin: "https://evil.example" },
      { origin: "null" },
      {},
    ];
    for (const headers of refused) {
      const res = await fetch(`${url}/auth/logout`, { method: "POST", headers: { ...cookie(), ...headers } });
      expect([headers, res.status]).toEqual([headers, 403]);
      expect(await bodyOf(res)).toMatchObject({ type: `${SITE_URL}/problems/forbidden` });
    }
    expect(called()).toEqual([]);
    // A read is no change: a cross-site GET with the cookie is answered.
    expect((await fetch(`${url}/v1/keys`, { headers: { ...cookie(), "sec-fetch-site": "cross-site" } })).status).toBe(200);
  });

  it("a write by cookie from this site goes through (Sec-Fetch-Site same-origin or none, or Origin the service's)", async () => {
    const fromThisSite: Record<string, string>[] = [{ "sec-fetch-site": "same-origin" }, { "sec-fetch-site": "none" }, { origin: BASE_URL }];
    for (const headers of fromThisSite) {
      const { fakes, of } = signInFakes();
      const { url } = await serve.app(fakes);
      const res = await fetch(`${url}/auth/logout`, { method: "POST", headers: { ...cookie(), ...headers } });
      expect([headers, res.status]).toEqual([headers, 200]);
      expect(of("endSession")).toEqual([{ accountId: ACCOUNT_ID, sessionId: SESSION_ID, actor: "session" }]);
    }
  });

  it("a bearer request is never subject to the check", async () => {
    const { fakes } = signInFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/auth/logout`, { method: "POST", headers: { authorization: `Bearer ${SESSION_TOKEN}`, "sec-fetch-site": "cross-site" } });
    expect(res.status).toBe(200);
  });

  it("logout ends the cookie's session and clears the cookie (Max-Age=0)", async () => {
    const { fakes, of } = signInFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/auth/logout`, { method: "POST", headers: { ...cookie(), "sec-fetch-site": "same-origin" } });
    expect(await bodyOf(res)).toEqual({ object: "session", ended: true, ended_at: ENDED_AT.toISOString() });
    expect(of("endSession")).toHaveLength(1);
    const cleared = attributesOf(res.headers.getSetCookie()[0] ?? "");
    expect(cleared).toMatchObject({ name: "c402_session", value: "", "max-age": "0", path: "/", httponly: "" });
  });
});

describe("POST /auth/session/cookie", () => {
  it("sets the cookie of the bearer session, for as long as the session lives, and never answers the token", async () => {
    const { fakes } = signInFakes();
    const { url } = await serve.app(fakes);
    const sent = Date.now();
    const res = await fetch(`${url}/auth/session/cookie`, { method: "POST", headers: { authorization: `Bearer ${SESSION_TOKEN}` } });
    const answered = Date.now();
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await bodyOf(res);
    expect(body).toEqual({ object: "session_cookie", cookie: "c402_session", expires_at: EXPIRES.toISOString(), note: expect.any(String) });
    expect(JSON.stringify(body)).not.toContain(SESSION_TOKEN);
    const c = attributesOf(res.headers.getSetCookie()[0] ?? "");
    expect(c).toMatchObject({ name: "c402_session", value: SESSION_TOKEN, httponly: "", samesite: "Lax", secure: "" });
    expectLifetimeOfSession(c["max-age"], sent, answered);
  });

  it("refuses an automation key with 403 (spec rule 5), and answers 401 without credentials; no cookie either way", async () => {
    const { fakes } = signInFakes();
    const { url } = await serve.app(fakes);
    const byKey = await fetch(`${url}/auth/session/cookie`, { method: "POST", headers: { authorization: `Bearer ${SELLER_KEY}` } });
    expect(byKey.status).toBe(403);
    expect(await bodyOf(byKey)).toMatchObject({ type: `${SITE_URL}/problems/forbidden`, reason: "key_cannot_mint_session_cookie" });
    expect(byKey.headers.getSetCookie()).toEqual([]);
    const none = await fetch(`${url}/auth/session/cookie`, { method: "POST" });
    expect(none.status).toBe(401);
    expect(none.headers.getSetCookie()).toEqual([]);
  });
});
