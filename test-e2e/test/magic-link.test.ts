import { baseUrl, call, newSeller, type Reply } from "../src/http";
import { linksMailedTo } from "../src/mail";

/**
 * Magic-link sign-in end to end: the service writes each mail as an .eml file
 * under its DATA_DIR (no SMTP_URL here), the test reads the link from it,
 * follows it like a browser, and uses the session cookie it gets: reads, a
 * CSRF-protected write (cross-site refused, same-origin accepted), logout.
 */

/** Asks for a link and answers it, read from the mail the service wrote. */
async function requestLink(email: string, returnTo?: string): Promise<{ reply: Reply; link: string }> {
  const address = email.trim().toLowerCase();
  const before = (await linksMailedTo(address)).length;
  const reply = await call("POST", "/auth/magic-link/request", { body: { email, ...(returnTo !== undefined ? { return_to: returnTo } : {}) } });
  expect(reply.status).toBe(200);
  const links = await linksMailedTo(address);
  expect(links).toHaveLength(before + 1);
  return { reply, link: links[links.length - 1]! };
}

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

const fresh = () => `Seller.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}@Example.com`;
const withCookie = (token: string, headers: Record<string, string> = {}) => ({ headers: { cookie: `c402_session=${token}`, ...headers } });

describe("magic-link sign-in and the browser session cookie", () => {
  it("request -> mail -> GET the link: 303 to return_to with the session cookie; the cookie reads, writes from this site only, and logs out", async () => {
    const email = fresh();
    const address = email.toLowerCase();
    const { reply, link } = await requestLink(`  ${email} `, "/v1/keys?limit=5");
    expect(reply.body).toEqual({
      object: "magic_link",
      sent: true,
      email: address,
      expires_at: expect.any(String),
      expires_in_seconds: 900,
      note: expect.any(String),
    });
    expect(link.startsWith(`${baseUrl()}/auth/verify?token=ml_`)).toBe(true);

    // Following the link, as a browser does.
    const followed = await fetch(link, { redirect: "manual" });
    expect(followed.status).toBe(303);
    expect(followed.headers.get("location")).toBe("/v1/keys?limit=5");
    expect(followed.headers.get("cache-control")).toBe("no-store");
    const setCookie = followed.headers.getSetCookie();
    expect(setCookie).toHaveLength(1);
    const cookie = attributesOf(setCookie[0]!);
    expect(cookie).toMatchObject({ name: "c402_session", value: expect.stringMatching(/^sess_[0-9A-Za-z]{32}$/), path: "/", httponly: "", samesite: "Lax" });
    // The service runs on loopback http here: a Secure cookie would never come back.
    expect(cookie).not.toHaveProperty("secure");
    expect(Number(cookie["max-age"])).toBeGreaterThan(24 * 3600 - 60);
    expect(Number(cookie["max-age"])).toBeLessThanOrEqual(24 * 3600);
    const session = cookie.value!;

    // The link works once.
    const again = await fetch(link, { redirect: "manual" });
    expect(again.status).toBe(401);
    expect(again.headers.getSetCookie()).toEqual([]);

    // Reads with the cookie alone: the profile of the account the first verify created, and its keys.
    const me = await call("GET", "/auth/me", withCookie(session));
    expect(me.status).toBe(200);
    const accountId = me.body.account_id as string;
    expect(accountId).toMatch(/^acct_/);
    const keys = await call("GET", "/v1/keys?limit=5", withCookie(session));
    expect(keys.status).toBe(200);
    expect(keys.body.keys).toEqual([]);

    // A write with the cookie: refused unless it comes from this site.
    const mint = { body: { scope: "read_only", mode: "test", name: "from the dashboard" } };
    const crossSite: Record<string, string>[] = [{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }, { origin: "https://evil.example" }, {}];
    for (const headers of crossSite) {
      const refused = await call("POST", "/v1/keys", { ...mint, ...withCookie(session, headers) });
      expect([headers, refused.status, refused.body?.type]).toEqual([headers, 403, expect.stringMatching(/\/problems\/forbidden$/)]);
    }
    expect((await call("GET", "/v1/keys", withCookie(session))).body.keys).toEqual([]);
    const minted = await call("POST", "/v1/keys", { ...mint, ...withCookie(session, { "sec-fetch-site": "same-origin" }) });
    expect(minted.status).toBe(201);
    const byOrigin = await call("POST", "/v1/keys", { ...mint, ...withCookie(session, { origin: baseUrl() }) });
    expect(byOrigin.status).toBe(201);

    // The account's events name the browser session as `session`.
    const events = (await call("GET", "/v1/account/events", withCookie(session))).body.events as {
      action: string;
      actor: string;
      object_id: string;
      detail: any;
    }[];
    expect(events.find((e) => e.action === "account.created")).toMatchObject({
      actor: "session",
      object_id: accountId,
      detail: { via: "magic_link", email: address },
    });
    expect(events.find((e) => e.action === "session.opened")).toMatchObject({ actor: "session", detail: { via: "magic_link", email: address } });
    expect(events.find((e) => e.action === "key.created" && e.object_id === minted.body.id)).toMatchObject({ actor: "session" });
    expect(JSON.stringify(events)).not.toContain(session);

    // Logout by cookie (a write: from this site), which clears it; the cookie is dead after.
    expect((await call("POST", "/auth/logout", withCookie(session, { "sec-fetch-site": "cross-site" }))).status).toBe(403);
    const out = await fetch(`${baseUrl()}/auth/logout`, { method: "POST", headers: { cookie: `c402_session=${session}`, "sec-fetch-site": "same-origin" } });
    expect(out.status).toBe(200);
    expect(attributesOf(out.headers.getSetCookie()[0] ?? "")).toMatchObject({ name: "c402_session", value: "", "max-age": "0" });
    expect((await call("GET", "/auth/me", withCookie(session))).status).toBe(401);
    expect((await call("GET", "/auth/me", { key: session })).status).toBe(401);
    const ended = (await call("GET", "/v1/account/events?action=session.", { key: minted.body.secret })).body.events;
    expect(ended[0]).toMatchObject({ action: "session.ended", actor: "session" });
  });

  it("POST /auth/verify answers the bearer session, and a later link reaches the same account; /auth/session/cookie turns the token into the cookie, a key gets 403", async () => {
    const email = fresh();
    const first = await call("POST", "/auth/verify", { body: { token: new URL((await requestLink(email)).link).searchParams.get("token") } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: "session", account: { created: true }, session: { cookie: "c402_session" }, return_to: null });
    expect(attributesOf(first.headers.get("set-cookie") ?? "")).toMatchObject({ name: "c402_session", value: first.body.session.token });
    // The same address, however it is spelled, is the same account; the answer to a request did not change.
    const second = await requestLink(email.toUpperCase());
    const secondSignIn = await call("POST", "/auth/verify", { body: { token: new URL(second.link).searchParams.get("token") } });
    expect(secondSignIn.body.account).toEqual({ id: first.body.account.id, created: false });

    const token = secondSignIn.body.session.token as string;
    const cookieSet = await fetch(`${baseUrl()}/auth/session/cookie`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
    expect(cookieSet.status).toBe(200);
    expect(await cookieSet.json()).toMatchObject({ object: "session_cookie", cookie: "c402_session" });
    expect(attributesOf(cookieSet.headers.getSetCookie()[0] ?? "")).toMatchObject({ name: "c402_session", value: token, httponly: "" });
    expect((await call("GET", "/auth/me", withCookie(token))).body.account_id).toBe(first.body.account.id);

    const seller = await newSeller();
    const byKey = await call("POST", "/auth/session/cookie", { key: seller.key });
    expect(byKey.status).toBe(403);
    expect(byKey.headers.get("set-cookie")).toBeNull();
    expect((await call("POST", "/auth/session/cookie")).status).toBe(401);
  });

  it("answers the same for an address with an account and one without", async () => {
    const known = fresh();
    const { link } = await requestLink(known);
    expect((await fetch(link, { redirect: "manual" })).status).toBe(303);
    const a = (await requestLink(known)).reply;
    const b = (await requestLink(fresh())).reply;
    const shape = (r: Reply) => ({ ...r.body, email: "-", expires_at: "-" });
    expect(shape(a)).toEqual(shape(b));
    expect(a.status).toBe(b.status);
  });

  it("refuses an open redirect and a bad address (422), and limits links per address (429 with Retry-After)", async () => {
    for (const returnTo of ["//evil.example", "/\\evil.example", "https://evil.example/", "/\t/evil.example"]) {
      const r = await call("POST", "/auth/magic-link/request", { body: { email: fresh(), return_to: returnTo } });
      expect([returnTo, r.status, r.body.errors]).toEqual([returnTo, 422, [expect.objectContaining({ field: "return_to" })]]);
    }
    const bad = await call("POST", "/auth/magic-link/request", { body: { email: "not an address" } });
    expect([bad.status, bad.body.errors]).toEqual([422, [expect.objectContaining({ field: "email" })]]);
    const email = fresh();
    const statuses: number[] = [];
    let last: Reply | undefined;
    for (let i = 0; i < 6; i++) {
      last = await call("POST", "/auth/magic-link/request", { body: { email } });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await linksMailedTo(email.toLowerCase())).toHaveLength(5);
  });

  it("a wallet sign-in again reaches the same account with a fresh key (key recovery)", async () => {
    const seller = await newSeller();
    const challenge = await call("POST", "/auth/wallet/challenge", { body: { address: seller.wallet.address, network: "eip155:8453" } });
    const signature = await seller.wallet.signMessage({ message: challenge.body.message });
    const again = await call("POST", "/auth/wallet/verify", { body: { message: challenge.body.message, signature } });
    expect(again.status).toBe(200);
    expect(again.body.account).toEqual({ id: seller.accountId, created: false });
    expect((await call("GET", "/auth/me", { key: again.body.api_key.secret })).body.account_id).toBe(seller.accountId);
  });
});
