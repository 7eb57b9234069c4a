import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import fc from "fast-check";
import * as oauth from "oauth4webapi";
import { chromium, type Browser } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { baseUrl, call, callFrom, newSeller, otherLoopbackAddress } from "../src/http";
import { linksMailedTo } from "../src/mail";

/**
 * The OAuth 2.1 authorization server (spec "OAuth server", Authentication 8;
 * issue 14): oauth4webapi, a strict client, for the protocol; a real headless
 * Chromium (Debian's, driven by playwright-core) clicking the consent after
 * signing in on the page; the official MCP SDK client running its own OAuth
 * flow against /mcp. Redirect URIs point at a loopback port nothing listens
 * on: the fetch-driven consent reads the 303's Location, the browser's
 * navigation there is intercepted.
 */

const insecure = { [oauth.allowInsecureRequests]: true } as const;
/** The applications' own requests with their tokens come from an address of their own: the 401s this file provokes count there, not against the rest of the suite. */
const APP_ADDRESS = otherLoopbackAddress();
const app = (method: string, path: string, opts: Parameters<typeof callFrom>[3] = {}) => callFrom(APP_ADDRESS, method, path, opts);
const CALLBACK = "http://127.0.0.1:9/callback";
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const COOKIE = "c402_session";

async function discover(): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(baseUrl());
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }));
}

async function registerPublic(as: oauth.AuthorizationServer, extra: Partial<oauth.OmitSymbolProperties<oauth.Client>> = {}): Promise<oauth.Client> {
  const res = await oauth.dynamicClientRegistrationRequest(
    as,
    { client_name: "e2e app", redirect_uris: [CALLBACK], grant_types: ["authorization_code", "refresh_token"], token_endpoint_auth_method: "none", ...extra },
    insecure,
  );
  return oauth.processDynamicClientRegistrationResponse(res);
}

interface Pkce {
  verifier: string;
  challenge: string;
  state: string;
}

async function pkce(): Promise<Pkce> {
  const verifier = oauth.generateRandomCodeVerifier();
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier), state: oauth.generateRandomState() };
}

function authorizeUrl(as: oauth.AuthorizationServer, client: oauth.Client, p: Pkce, params: Record<string, string> = {}): URL {
  const url = new URL(as.authorization_endpoint!);
  const all: Record<string, string> = {
    client_id: client.client_id,
    redirect_uri: CALLBACK,
    response_type: "code",
    scope: "checkouts.write",
    code_challenge: p.challenge,
    code_challenge_method: "S256",
    state: p.state,
    ...params,
  };
  for (const [k, v] of Object.entries(all)) if (v !== "") url.searchParams.set(k, v);
  return url;
}

/** The consent without a browser: the page as the signed-in user sees it, then the form posted from this site. Answers the 303's Location. */
async function consentByFetch(url: URL, session: string, decision: "allow" | "deny" = "allow"): Promise<URL> {
  const page = await fetch(url, { headers: { cookie: `${COOKIE}=${session}` }, redirect: "manual" });
  if (page.status === 303) return new URL(page.headers.get("location")!);
  const html = await page.text();
  const requestId = /name="request_id" value="([^"]+)"/.exec(html)?.[1];
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
  if (!requestId || !csrf) throw new Error(`no consent form (${page.status}): ${html.slice(0, 400)}`);
  const res = await postConsent(session, { request_id: requestId, csrf_token: csrf, decision });
  if (res.status !== 303) throw new Error(`consent answered ${res.status}: ${await res.text()}`);
  return new URL(res.headers.get("location")!);
}

function postConsent(session: string, form: Record<string, string>, origin = baseUrl()) {
  return fetch(`${baseUrl()}/oauth/consent`, {
    method: "POST",
    headers: { cookie: `${COOKIE}=${session}`, "content-type": "application/x-www-form-urlencoded", origin },
    body: new URLSearchParams(form),
    redirect: "manual",
  });
}

async function exchange(as: oauth.AuthorizationServer, client: oauth.Client, callback: URL, p: Pkce) {
  const params = oauth.validateAuthResponse(as, client, callback, p.state);
  const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, CALLBACK, p.verifier, insecure);
  return oauth.processAuthorizationCodeResponse(as, client, res);
}

/** A seller signed in with a wallet: its key, and a session for the browser's cookie. */
async function signedInSeller() {
  const seller = await newSeller();
  return { ...seller, session: seller.verified.body.session.token as string };
}

/** A seller connected to a fresh public client through the whole flow (fetch-driven consent). */
async function connected(scope = "checkouts.write", params: Record<string, string> = {}) {
  const as = await discover();
  const client = await registerPublic(as);
  const seller = await signedInSeller();
  const p = await pkce();
  const callback = await consentByFetch(authorizeUrl(as, client, p, { scope, ...params }), seller.session);
  const tokens = await exchange(as, client, callback, p);
  return { as, client, seller, tokens, callback, p };
}

async function refresh(as: oauth.AuthorizationServer, client: oauth.Client, refreshToken: string) {
  return oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, insecure));
}

/** The OAuth error a failing call ends in. */
async function oauthErrorOf(promise: Promise<unknown>): Promise<{ error: string; status: number }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof oauth.ResponseBodyError) return { error: err.error, status: err.status };
    throw err;
  }
  throw new Error("expected an OAuth error");
}

interface EventRow {
  action: string;
  actor: string;
  detail: any;
}

/** The account's events once `ready` holds (other services' events reach identity through the bus: later in distributed mode). */
async function eventsWhen(key: string, query: string, ready: (events: EventRow[]) => boolean): Promise<EventRow[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const events = (await call("GET", `/v1/account/events${query}`, { key })).body.events as EventRow[];
    if (ready(events) || Date.now() > deadline) return events;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("OAuth discovery documents", () => {
  it("serves RFC 8414 metadata at both well-known paths and RFC 9728 documents for the REST API and /mcp", async () => {
    const as = await discover();
    expect(as).toMatchObject({
      issuer: baseUrl(),
      authorization_endpoint: `${baseUrl()}/oauth/authorize`,
      token_endpoint: `${baseUrl()}/oauth/token`,
      registration_endpoint: `${baseUrl()}/oauth/register`,
      code_challenge_methods_supported: ["S256"],
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
      scopes_supported: ["checkouts.write", "mcp.read", "mcp.write"],
      authorization_response_iss_parameter_supported: true,
    });
    const other = await call("GET", "/.well-known/oauth-authorization-server/mcp");
    expect(other.status).toBe(200);
    expect(other.body).toEqual((await call("GET", "/.well-known/oauth-authorization-server")).body);
    expect(other.headers.get("access-control-allow-origin")).toBe("*");

    const mcp = new URL(`${baseUrl()}/mcp`);
    const prm = await oauth.processResourceDiscoveryResponse(mcp, await oauth.resourceDiscoveryRequest(mcp, insecure));
    expect(prm).toMatchObject({
      resource: mcp.href,
      authorization_servers: [baseUrl()],
      scopes_supported: ["mcp.read", "mcp.write"],
      bearer_methods_supported: ["header"],
    });
    const rest = new URL(baseUrl());
    const root = await oauth.processResourceDiscoveryResponse(rest, await oauth.resourceDiscoveryRequest(rest, insecure));
    expect(root).toMatchObject({ resource: baseUrl(), authorization_servers: [baseUrl()], scopes_supported: ["checkouts.write"] });
  });

  it("/mcp's 401 points at its protected-resource document and asks for both MCP scopes", async () => {
    const res = await app("POST", "/mcp", { body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } } });
    expect(res.status).toBe(401);
    const header = res.headers.get("www-authenticate")!;
    expect(header).toMatch(/^Bearer /);
    expect(header).toContain(`resource_metadata="${baseUrl()}/.well-known/oauth-protected-resource/mcp"`);
    expect(header).toContain('scope="mcp.read mcp.write"');
  });
});

describe("dynamic client registration (RFC 7591)", () => {
  it("registers a public client (no secret) and a confidential one (a secret that does not expire), echoing the metadata", async () => {
    const as = await discover();
    const pub = await registerPublic(as, { application_type: "native" } as never);
    expect(pub).toMatchObject({
      client_id: expect.stringMatching(/^ocl_/),
      redirect_uris: [CALLBACK],
      token_endpoint_auth_method: "none",
      application_type: "native",
    });
    expect(pub.client_secret).toBeUndefined();

    const res = await oauth.dynamicClientRegistrationRequest(as, { client_name: "server app", redirect_uris: ["https://app.example/cb"] }, insecure);
    const confidential = await oauth.processDynamicClientRegistrationResponse(res);
    expect(confidential).toMatchObject({
      token_endpoint_auth_method: "client_secret_basic",
      client_secret: expect.stringMatching(/^ocs_[0-9A-Za-z]{32}$/),
      client_secret_expires_at: 0,
      grant_types: ["authorization_code"],
      response_types: ["code"],
    });
  });

  it("refuses redirect URIs that are neither https nor loopback, and metadata of the wrong types, with RFC 7591 errors", async () => {
    const cases: [unknown, string][] = [
      [{ redirect_uris: ["http://app.example/cb"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["https://app.example/cb#frag"] }, "invalid_redirect_uri"],
      [{ redirect_uris: [] }, "invalid_redirect_uri"],
      [{ redirect_uris: "https://app.example/cb" }, "invalid_redirect_uri"],
      [{ redirect_uris: ["https://app.example/cb"], grant_types: ["client_credentials"] }, "invalid_client_metadata"],
      [{ redirect_uris: ["https://app.example/cb"], token_endpoint_auth_method: "private_key_jwt" }, "invalid_client_metadata"],
      [{ redirect_uris: ["https://app.example/cb"], scope: "admin" }, "invalid_client_metadata"],
      [{ redirect_uris: ["https://app.example/cb"], client_name: 7 }, "invalid_client_metadata"],
      ["[1,2", "invalid_client_metadata"],
    ];
    for (const [body, error] of cases) {
      const res = await call("POST", "/oauth/register", { body });
      expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error });
      expect(res.body.error_description).toEqual(expect.any(String));
    }
  });
});

describe("authorization, consent and tokens", () => {
  it("a strict client completes code + PKCE; the token acts on REST at the payments rung, and /mcp refuses it", async () => {
    const { tokens, callback, seller, client } = await connected();
    expect(callback.searchParams.get("iss")).toBe(baseUrl());
    expect(tokens).toMatchObject({ token_type: "bearer", expires_in: 3600, scope: "checkouts.write", refresh_token: expect.stringMatching(/^ort_/) });

    const created = await app("POST", "/v1/checkouts", { key: tokens.access_token, body: { title: "Via OAuth", price_usd: "0.10", payload: { ok: true } } });
    expect(created.status).toBe(201);
    expect(created.body.test_mode).toBe(true);
    const live = await app("POST", `/v1/checkouts/${created.body.id}/go-live`, { key: tokens.access_token });
    expect(live.status).toBe(200);
    expect(live.body.test_mode).toBe(false);

    // Capped at the payments rung: wallets and keys are refused.
    expect((await app("PUT", "/v1/account/wallets", { key: tokens.access_token, body: { wallets: {} } })).status).toBe(403);
    expect((await app("POST", "/v1/keys", { key: tokens.access_token, body: { scope: "payments" } })).status).toBe(403);
    expect((await app("GET", "/v1/keys", { key: tokens.access_token })).status).toBe(403);
    // A REST token is not one /mcp takes.
    const mcp = await app("POST", "/mcp", {
      key: tokens.access_token,
      body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } },
    });
    expect(mcp.status).toBe(401);

    const events = await eventsWhen(seller.key, "", (rows) => rows.some((e) => e.action === "checkout.live"));
    const actor = `oauth:${client.client_id}`;
    expect(events.find((e) => e.action === "oauth.granted")).toMatchObject({ actor, detail: { client_id: client.client_id, scopes: ["checkouts.write"] } });
    expect(events.find((e) => e.action === "checkout.created")).toMatchObject({ actor });
    expect(events.find((e) => e.action === "checkout.live")).toMatchObject({ actor });
  });

  it("a token with only MCP scopes gets 401 on REST", async () => {
    const { tokens } = await connected("mcp.read mcp.write", { resource: `${baseUrl()}/mcp` });
    expect(tokens.scope).toBe("mcp.read mcp.write");
    const rest = await app("GET", "/v1/checkouts", { key: tokens.access_token });
    expect(rest.status).toBe(401);
    expect(rest.body.detail.message).toContain("checkouts.write");
  });

  it("refresh tokens rotate on every use; presenting a spent one revokes the whole grant", async () => {
    const { as, client, tokens, seller } = await connected();
    const second = await refresh(as, client, tokens.refresh_token!);
    expect(second.refresh_token).not.toBe(tokens.refresh_token);
    expect((await app("GET", "/v1/checkouts", { key: second.access_token })).status).toBe(200);
    const third = await refresh(as, client, second.refresh_token!);

    // The first refresh token again: a replay. The grant ends, with every token of it.
    expect(await oauthErrorOf(refresh(as, client, tokens.refresh_token!))).toEqual({ error: "invalid_grant", status: 400 });
    expect(await oauthErrorOf(refresh(as, client, third.refresh_token!))).toEqual({ error: "invalid_grant", status: 400 });
    expect((await app("GET", "/v1/checkouts", { key: third.access_token })).status).toBe(401);
    const events = (await call("GET", "/v1/account/events?action=oauth", { key: seller.key })).body.events as EventRow[];
    expect(events.map((e) => e.action)).toEqual(["oauth.revoked", "oauth.granted"]);
    expect(events[0]).toMatchObject({ actor: `oauth:${client.client_id}`, detail: { because: "refresh_token_reused" } });
  });

  it("a code is used once: the second exchange fails and revokes what the first gave", async () => {
    const { as, client, tokens, callback, p } = await connected();
    const params = oauth.validateAuthResponse(as, client, callback, p.state);
    const again = oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, CALLBACK, p.verifier, insecure);
    expect(await oauthErrorOf(again.then((res) => oauth.processAuthorizationCodeResponse(as, client, res)))).toEqual({ error: "invalid_grant", status: 400 });
    expect((await app("GET", "/v1/checkouts", { key: tokens.access_token })).status).toBe(401);
    expect(await oauthErrorOf(refresh(as, client, tokens.refresh_token!))).toMatchObject({ error: "invalid_grant" });
  });

  it("PKCE is required: a wrong verifier is invalid_grant; a request without a challenge, or with plain, goes back as invalid_request with iss and state", async () => {
    const as = await discover();
    const client = await registerPublic(as);
    const seller = await signedInSeller();
    const p = await pkce();
    const callback = await consentByFetch(authorizeUrl(as, client, p), seller.session);
    const params = oauth.validateAuthResponse(as, client, callback, p.state);
    const wrong = oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, CALLBACK, oauth.generateRandomCodeVerifier(), insecure);
    expect(await oauthErrorOf(wrong.then((res) => oauth.processAuthorizationCodeResponse(as, client, res)))).toEqual({ error: "invalid_grant", status: 400 });

    const withoutChallenge: Record<string, string>[] = [{ code_challenge: "", code_challenge_method: "" }, { code_challenge_method: "plain" }];
    for (const params of withoutChallenge) {
      const back = await consentByFetch(authorizeUrl(as, client, p, params), seller.session);
      expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: "invalid_request", state: p.state, iss: baseUrl() });
      expect(() => oauth.validateAuthResponse(as, client, back, p.state)).toThrow(oauth.AuthorizationResponseError);
    }
  });

  it("never redirects for an unknown client or an unregistered redirect URI; a loopback URI may change its port", async () => {
    const as = await discover();
    const client = await registerPublic(as);
    const seller = await signedInSeller();
    const p = await pkce();
    const unproven: Record<string, string>[] = [
      { client_id: "ocl_000000000000000000000000" },
      { redirect_uri: "http://127.0.0.1:9/elsewhere" },
      { redirect_uri: "https://evil.example/cb" },
    ];
    for (const params of unproven) {
      const res = await fetch(authorizeUrl(as, client, p, params), { headers: { cookie: `${COOKIE}=${seller.session}` }, redirect: "manual" });
      expect({ params, status: res.status, location: res.headers.get("location") }).toEqual({ params, status: 400, location: null });
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    }
    const otherPort = await consentByFetch(authorizeUrl(as, client, p, { redirect_uri: "http://127.0.0.1:8123/callback" }), seller.session);
    expect(otherPort.origin).toBe("http://127.0.0.1:8123");
    expect(otherPort.searchParams.get("code")).toMatch(/^oac_/);
  });

  it("the consent is CSRF-protected, decided once, and Deny goes back as access_denied", async () => {
    const as = await discover();
    const client = await registerPublic(as);
    const seller = await signedInSeller();
    const p = await pkce();
    const page = await (await fetch(authorizeUrl(as, client, p), { headers: { cookie: `${COOKIE}=${seller.session}` } })).text();
    const requestId = /name="request_id" value="([^"]+)"/.exec(page)![1]!;
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)![1]!;

    expect((await postConsent(seller.session, { request_id: requestId, csrf_token: csrf, decision: "allow" }, "https://evil.example")).status).toBe(403);
    expect((await postConsent(seller.session, { request_id: requestId, csrf_token: "x".repeat(32), decision: "allow" })).status).toBe(400);
    const other = await signedInSeller();
    expect((await postConsent(other.session, { request_id: requestId, csrf_token: csrf, decision: "allow" })).status).toBe(400);

    const denied = await postConsent(seller.session, { request_id: requestId, csrf_token: csrf, decision: "deny" });
    expect(denied.status).toBe(303);
    const back = new URL(denied.headers.get("location")!);
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: "access_denied", state: p.state, iss: baseUrl() });
    expect((await postConsent(seller.session, { request_id: requestId, csrf_token: csrf, decision: "allow" })).status).toBe(400);
  });

  it("the token endpoint authenticates confidential clients (Basic or the body, never both) and answers RFC 6749 errors", async () => {
    const as = await discover();
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { client_name: "basic app", redirect_uris: [CALLBACK], grant_types: ["authorization_code", "refresh_token"] },
        insecure,
      ),
    );
    const secret = registered.client_secret as string;
    const seller = await signedInSeller();
    const p = await pkce();
    const callback = await consentByFetch(authorizeUrl(as, registered, p), seller.session);
    const params = oauth.validateAuthResponse(as, registered, callback, p.state);
    // RFC 6749 §5.2: a client that tried HTTP Basic is answered 401 with a Basic challenge (oauth4webapi reports it as such).
    const wrongSecret = await oauth.authorizationCodeGrantRequest(
      as,
      registered,
      oauth.ClientSecretBasic("ocs_" + "0".repeat(32)),
      params,
      CALLBACK,
      p.verifier,
      insecure,
    );
    expect([wrongSecret.status, wrongSecret.headers.get("www-authenticate")]).toEqual([401, expect.stringMatching(/^Basic realm=/)]);
    expect(((await wrongSecret.json()) as { error: string }).error).toBe("invalid_client");
    const ok = await oauth.processAuthorizationCodeResponse(
      as,
      registered,
      await oauth.authorizationCodeGrantRequest(as, registered, oauth.ClientSecretBasic(secret), params, CALLBACK, p.verifier, insecure),
    );
    const viaPost = await oauth.processRefreshTokenResponse(
      as,
      registered,
      await oauth.refreshTokenGrantRequest(as, registered, oauth.ClientSecretPost(secret), ok.refresh_token!, insecure),
    );
    expect(viaPost.access_token).toMatch(/^oat_/);

    const token = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${baseUrl()}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(body),
      });
    const basic = `Basic ${Buffer.from(`${registered.client_id}:${secret}`).toString("base64")}`;
    const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;
    const both = await token({ grant_type: "refresh_token", refresh_token: viaPost.refresh_token!, client_secret: secret }, { authorization: basic });
    expect([both.status, await errorOf(both)]).toEqual([400, "invalid_request"]);
    const grant = await token({ grant_type: "client_credentials", client_id: registered.client_id });
    expect([grant.status, await errorOf(grant)]).toEqual([400, "unsupported_grant_type"]);
    const json = await fetch(`${baseUrl()}/oauth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect([json.status, await errorOf(json), json.headers.get("cache-control")]).toEqual([400, "invalid_request", "no-store"]);
    const unknown = await token({ grant_type: "refresh_token", refresh_token: "ort_" + "a".repeat(32), client_id: "ocl_000000000000000000000000" });
    expect([unknown.status, await errorOf(unknown)]).toEqual([401, "invalid_client"]);
  });

  it("revocation (RFC 7009) ends the connection: access and refresh tokens stop at once", async () => {
    const { as, client, tokens, seller } = await connected();
    const res = await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, insecure);
    await oauth.processRevocationResponse(res);
    expect((await app("GET", "/v1/checkouts", { key: tokens.access_token })).status).toBe(401);
    expect(await oauthErrorOf(refresh(as, client, tokens.refresh_token!))).toMatchObject({ error: "invalid_grant" });
    const events = (await call("GET", "/v1/account/events?action=oauth.revoked", { key: seller.key })).body.events;
    expect(events[0]).toMatchObject({ actor: `oauth:${client.client_id}`, detail: { because: "revoked_by_client" } });
  });
});

describe("the consent in a real browser", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("signs in by magic link from the authorize page, clicks Allow; the client exchanges the code, rotates the refresh token, and a replay revokes the grant", async () => {
    const as = await discover();
    const client = await registerPublic(as);
    const p = await pkce();
    const email = `oauth-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
    const page = await browser.newPage();
    let callback: string | undefined;
    await page.route("http://127.0.0.1:9/**", (route) => {
      callback = route.request().url();
      return route.fulfill({ status: 200, contentType: "text/plain", body: "connected" });
    });
    await page.goto(authorizeUrl(as, client, p).href);
    await page.fill("#email", email);
    await page.click("#mail button[type=submit]");
    await page.waitForSelector("#status:has-text('Check your mail')");
    const [link] = await linksMailedTo(email);
    // The mailed link signs this browser in and brings it back to the authorize URL, now the consent.
    await page.goto(link!);
    await page.waitForSelector("button[value=allow]");
    expect(await page.textContent("main")).toContain("e2e app");
    await page.click("button[value=allow]");
    await page.waitForURL(/^http:\/\/127\.0\.0\.1:9\/callback/);
    const tokens = await exchange(as, client, new URL(callback!), p);
    // The account the mailed link opened (no payout wallet yet, so nothing to sell): the token reads it.
    const listed = await app("GET", "/v1/checkouts", { key: tokens.access_token });
    expect([listed.status, listed.body.checkouts]).toEqual([200, []]);
    await page.close();

    // Rotation: each refresh spends the token it used. The spent one presented again ends the grant.
    const rotated = await refresh(as, client, tokens.refresh_token!);
    expect((await app("GET", "/v1/checkouts", { key: rotated.access_token })).status).toBe(200);
    expect(await oauthErrorOf(refresh(as, client, tokens.refresh_token!))).toEqual({ error: "invalid_grant", status: 400 });
    expect((await app("GET", "/v1/checkouts", { key: rotated.access_token })).status).toBe(401);
    expect(await oauthErrorOf(refresh(as, client, rotated.refresh_token!))).toMatchObject({ error: "invalid_grant" });
  });

  it("signs in with a wallet from the authorize page (an EIP-1193 provider in the page), clicks Allow, and the token sells from that wallet's account", async () => {
    const as = await discover();
    const client = await registerPublic(as, { client_name: "wallet app" });
    const p = await pkce();
    const wallet = privateKeyToAccount(generatePrivateKey());
    const page = await browser.newPage();
    let callback: string | undefined;
    await page.route("http://127.0.0.1:9/**", (route) => {
      callback = route.request().url();
      return route.fulfill({ status: 200, contentType: "text/plain", body: "connected" });
    });
    // What a wallet extension injects: accounts, the chain, and personal_sign (here by a viem key outside the page).
    await page.exposeFunction("__signWithWallet", (message: string) => wallet.signMessage({ message }));
    await page.addInitScript((address: string) => {
      const w = (globalThis as unknown as { window: unknown }).window as { ethereum: unknown; __signWithWallet: (m: string) => Promise<string> };
      w.ethereum = {
        request: async ({ method, params }: { method: string; params?: unknown[] }) => {
          if (method === "eth_requestAccounts") return [address];
          if (method === "eth_chainId") return "0x2105";
          if (method === "personal_sign") return w.__signWithWallet(String(params?.[0]));
          throw new Error(`unsupported ${method}`);
        },
      };
    }, wallet.address);
    await page.goto(authorizeUrl(as, client, p).href);
    await page.click("#wallet");
    // Signed in: the page reloads as the consent.
    await page.waitForSelector("button[value=allow]");
    expect(await page.textContent("main")).toContain("wallet app");
    await page.click("button[value=allow]");
    await page.waitForURL(/^http:\/\/127\.0\.0\.1:9\/callback/);
    const tokens = await exchange(as, client, new URL(callback!), p);
    await page.close();
    const created = await call("POST", "/v1/checkouts", {
      key: tokens.access_token,
      body: { title: "Signed in by wallet", price_usd: "0.10", payload: { ok: true } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ pay_to: wallet.address, test_mode: true });
  });
});

/** The MCP SDK's OAuth client provider, with the test driving the consent in place of a browser. */
class TestOAuthProvider implements OAuthClientProvider {
  readonly redirectUrl = "http://127.0.0.1:9/mcp-callback";
  authorizationUrl: URL | undefined;
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = "";

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "MCP SDK e2e",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    return "sdk-state";
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all" || scope === "client") this.info = undefined;
  }
}

describe("the MCP SDK client's own OAuth flow", () => {
  it("401 → registration → consent → finishAuth → the same client calls tools; create_checkout is unarmed and go_live arms it", async () => {
    const seller = await signedInSeller();
    const provider = new TestOAuthProvider();
    const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl()}/mcp`), { authProvider: provider });
    const client = new Client({ name: "c402-oauth-e2e", version: "1.0.0" });
    await client.connect(transport);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);

    const args = { title: "Agent's checkout", price_usd: "0.25", payload: { goods: true } };
    await expect(client.callTool({ name: "create_checkout", arguments: args })).rejects.toThrow(/Unauthorized/i);
    expect(provider.authorizationUrl?.searchParams.get("resource")).toBe(`${baseUrl()}/mcp`);
    expect(provider.authorizationUrl?.searchParams.get("scope")).toBe("mcp.read mcp.write");
    const callback = await consentByFetch(provider.authorizationUrl!, seller.session);
    await transport.finishAuth(callback.searchParams.get("code")!);

    const who = (await client.callTool({ name: "whoami", arguments: {} })).structuredContent as any;
    expect(who).toMatchObject({ account_id: seller.accountId, credential: { kind: "oauth", scope: "full" } });
    const created = (await client.callTool({ name: "create_checkout", arguments: args })).structuredContent as any;
    expect(created.test_mode).toBe(true);
    const armed = (await client.callTool({ name: "go_live", arguments: { checkout_id: created.id } })).structuredContent as any;
    expect(armed).toMatchObject({ id: created.id, test_mode: false });
    await client.close();

    const events = await eventsWhen(seller.key, "", (rows) => rows.some((e) => e.action === "checkout.created"));
    const clientId = (provider.clientInformation() as { client_id: string }).client_id;
    expect(events.find((e) => e.action === "checkout.created")).toMatchObject({ actor: `oauth:${clientId}` });
  });

  it("an mcp.read token reads but gets HTTP 403 insufficient_scope on a write tool", async () => {
    const { tokens } = await connected("mcp.read", { resource: `${baseUrl()}/mcp` });
    const post = (name: string) =>
      fetch(`${baseUrl()}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tokens.access_token}` },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name, arguments: name === "create_checkout" ? { title: "x", price_usd: "0.10" } : {} },
        }),
      });
    expect((await post("list_checkouts")).status).toBe(200);
    const refused = await post("create_checkout");
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
  });
});

describe("no input gets a 5xx", () => {
  it("fast-check forms, queries and JSON against every OAuth endpoint", async () => {
    const as = await discover();
    const client = await registerPublic(as);
    const seller = await signedInSeller();
    const statuses = new Set<number>();
    const text = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.constantFrom(client.client_id, CALLBACK, "S256", "code", "mcp.write", "authorization_code", "refresh_token", "ort_" + "a".repeat(32)),
    );
    const params = (names: string[]) => fc.dictionary(fc.constantFrom(...names), fc.oneof(text, fc.array(text, { maxLength: 2 })), { maxKeys: names.length });
    const form = (values: Record<string, string | string[]>) => {
      const body = new URLSearchParams();
      for (const [k, v] of Object.entries(values)) for (const one of [v].flat()) body.append(k, one);
      return body;
    };
    await fc.assert(
      fc.asyncProperty(
        params(["grant_type", "code", "code_verifier", "redirect_uri", "refresh_token", "resource", "scope", "client_id", "client_secret"]),
        fc.option(fc.string({ maxLength: 60 })),
        async (values, authorization) => {
          const res = await fetch(`${baseUrl()}/oauth/token`, {
            method: "POST",
            headers: {
              "content-type": "application/x-www-form-urlencoded",
              ...(authorization !== null ? { authorization: `Basic ${Buffer.from(authorization).toString("base64")}` } : {}),
            },
            body: form(values),
          });
          statuses.add(res.status);
          expect(res.status).toBeLessThan(500);
        },
      ),
      { numRuns: 150, seed: 12 },
    );
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), async (value) => {
        const res = await call("POST", "/oauth/register", { body: JSON.stringify(value) });
        statuses.add(res.status);
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: 100, seed: 13 },
    );
    await fc.assert(
      fc.asyncProperty(
        params(["client_id", "redirect_uri", "response_type", "scope", "resource", "code_challenge", "code_challenge_method", "state"]),
        fc.boolean(),
        async (values, signedIn) => {
          const url = new URL(`${baseUrl()}/oauth/authorize`);
          url.search = form(values).toString();
          const res = await fetch(url, { headers: signedIn ? { cookie: `${COOKIE}=${seller.session}` } : {}, redirect: "manual" });
          statuses.add(res.status);
          expect(res.status).toBeLessThan(500);
        },
      ),
      { numRuns: 150, seed: 14 },
    );
    await fc.assert(
      fc.asyncProperty(params(["request_id", "csrf_token", "decision"]), async (values) => {
        const res = await postConsent(seller.session, Object.fromEntries(Object.entries(values).map(([k, v]) => [k, [v].flat().join(",")])));
        statuses.add(res.status);
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: 100, seed: 15 },
    );
    expect([...statuses].some((s) => s >= 400)).toBe(true);
  });
});
