import { createHash } from "node:crypto";
import { EmbeddedPostgres, migrate } from "@c402/db";
import { newId } from "@c402/ids";
import { identityMigrations } from "../src";
import {
  ACCESS_TOKEN_TTL_SECONDS,
  CODE_TTL_SECONDS,
  OAuthServer,
  REFRESH_IDLE_SECONDS,
  REQUEST_TTL_SECONDS,
  UNUSED_CLIENT_TTL_SECONDS,
} from "../src/domain/oauth";
import { grantedScopes, OAuthResources, pkceVerifies, redirectUriMatches, redirectUriRefusal, rungAt } from "../src/domain/oauth-rules";
import type { IdentityDb } from "../src/store/identity-store";

/**
 * The OAuth server's rules on PostgreSQL (PGlite) with a clock the test
 * moves: lifetimes (code, consent request, access token, six months idle),
 * rotation and replay, and the pure rules (redirect URIs, scopes and
 * resources, PKCE). test-e2e/test/oauth.test.ts drives the same server over
 * HTTP with real clients.
 */

const BASE = "http://127.0.0.1:4020";
const CALLBACK = "http://127.0.0.1:9/cb";
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE = createHash("sha256").update(VERIFIER).digest("base64url");

describe("OAuth rules", () => {
  const resources = new OAuthResources(BASE);

  it("PKCE S256 is RFC 7636's: the appendix B pair verifies, any other verifier does not", () => {
    expect(CHALLENGE).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    expect(pkceVerifies(VERIFIER, CHALLENGE)).toBe(true);
    expect(pkceVerifies(VERIFIER.replace("d", "e"), CHALLENGE)).toBe(false);
    expect(pkceVerifies("short", CHALLENGE)).toBe(false);
  });

  it("redirect URIs: https or loopback http to register; exact match, but a loopback port may change", () => {
    expect(redirectUriRefusal("https://app.example/cb")).toBeUndefined();
    expect(redirectUriRefusal("http://127.0.0.1/cb")).toBeUndefined();
    expect(redirectUriRefusal("http://[::1]:5000/cb")).toBeUndefined();
    expect(redirectUriRefusal("http://localhost/cb")).toBeUndefined();
    for (const bad of [
      "http://app.example/cb",
      "https://app.example/cb#x",
      "com.app:/cb",
      "/relative",
      "https://user:pw@app.example/cb",
      "javascript:alert(1)",
    ]) {
      expect({ bad, refusal: redirectUriRefusal(bad) }).toEqual({ bad, refusal: expect.any(String) });
    }
    expect(redirectUriMatches("https://app.example/cb", "https://app.example/cb")).toBe(true);
    expect(redirectUriMatches("https://app.example/cb?x=1", "https://app.example/cb")).toBe(false);
    expect(redirectUriMatches("https://app.example:8443/cb", "https://app.example/cb")).toBe(false);
    expect(redirectUriMatches("http://127.0.0.1:51000/cb", "http://127.0.0.1/cb")).toBe(true);
    expect(redirectUriMatches("http://127.0.0.1:51000/cb", "http://127.0.0.1:9/cb")).toBe(true);
    expect(redirectUriMatches("http://127.0.0.1:51000/other", "http://127.0.0.1/cb")).toBe(false);
    expect(redirectUriMatches("http://localhost:51000/cb", "http://127.0.0.1/cb")).toBe(false);
  });

  it("scopes and resources: a resource narrows to its scopes, an unknown one is invalid_target; each audience has its rung", () => {
    const opts = { redirect: true };
    expect(grantedScopes("mcp.read mcp.write", `${BASE}/mcp`, resources, null, opts)).toEqual({ scopes: ["mcp.read", "mcp.write"], resource: `${BASE}/mcp` });
    expect(grantedScopes(undefined, `${BASE}/mcp`, resources, null, opts)).toEqual({ scopes: ["mcp.read", "mcp.write"], resource: `${BASE}/mcp` });
    expect(grantedScopes("checkouts.write offline_access", undefined, resources, null, opts)).toEqual({ scopes: ["checkouts.write"], resource: BASE });
    expect(grantedScopes("checkouts.write mcp.write", `${BASE}/`, resources, null, opts)).toEqual({ scopes: ["checkouts.write"], resource: BASE });
    expect(grantedScopes("mcp.write checkouts.write", undefined, resources, null, opts)).toEqual({ scopes: ["checkouts.write", "mcp.write"], resource: "" });
    expect(() => grantedScopes("checkouts.write", "https://elsewhere.example/mcp", resources, null, opts)).toThrow(
      expect.objectContaining({ extensions: { oauth_error: "invalid_target", oauth_redirect: true } }),
    );
    expect(() => grantedScopes("checkouts.write", `${BASE}/mcp`, resources, null, opts)).toThrow(
      expect.objectContaining({ extensions: expect.objectContaining({ oauth_error: "invalid_scope" }) }),
    );
    expect(() => grantedScopes("admin", undefined, resources, null, opts)).toThrow(
      expect.objectContaining({ extensions: expect.objectContaining({ oauth_error: "invalid_scope" }) }),
    );
    expect(() => grantedScopes(undefined, undefined, resources, null, opts)).toThrow(
      expect.objectContaining({ extensions: expect.objectContaining({ oauth_error: "invalid_scope" }) }),
    );
    expect(() => grantedScopes("mcp.write", undefined, resources, "mcp.read", opts)).toThrow(
      expect.objectContaining({ extensions: expect.objectContaining({ oauth_error: "invalid_scope" }) }),
    );

    expect(rungAt("rest", ["checkouts.write"])).toBe("payments");
    expect(rungAt("rest", ["mcp.read", "mcp.write"])).toBeUndefined();
    expect(rungAt("mcp", ["mcp.write"])).toBe("full");
    expect(rungAt("mcp", ["mcp.read"])).toBe("read_only");
    expect(rungAt("mcp", ["checkouts.write"])).toBeUndefined();
  });
});

describe("OAuth server lifetimes, rotation and replay", () => {
  let pg: EmbeddedPostgres;
  let db: IdentityDb;
  let server: OAuthServer;
  let clock = new Date("2026-11-27T10:00:00Z");
  const later = (seconds: number) => {
    clock = new Date(clock.getTime() + seconds * 1000);
  };

  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
    const database = pg.forSchema("identity");
    await migrate(database, identityMigrations);
    db = database.db as IdentityDb;
    server = new OAuthServer(db, { baseUrl: BASE }, () => clock);
  });
  afterAll(() => pg.close());

  async function account() {
    const id = newId("account");
    await db.insertInto("accounts").values({ id, created_at: clock, email: null }).execute();
    return { accountId: id, sessionId: newId("session") };
  }

  /** A public client, a consent by a fresh account, and the code it gave. */
  async function consented(scope = "checkouts.write") {
    const { client } = await server.register({
      redirectUris: [CALLBACK],
      grantTypes: ["authorization_code", "refresh_token"],
      responseTypes: [],
      tokenEndpointAuthMethod: "none",
    });
    const signedIn = await account();
    const pending = await server.authorize({
      clientId: client.id,
      redirectUri: CALLBACK,
      responseType: "code",
      scope,
      codeChallenge: CHALLENGE,
      codeChallengeMethod: "S256",
      state: "s",
      signedIn,
    });
    const decided = await server.decide({ requestId: pending.requestId!, csrfToken: pending.csrfToken!, ...signedIn, allow: true });
    return { clientId: client.id, code: decided.code!, accountId: signedIn.accountId };
  }

  const exchange = (clientId: string, code: string) =>
    server.token({ grantType: "authorization_code", clientId, code, codeVerifier: VERIFIER, redirectUri: CALLBACK });
  const refresh = (clientId: string, refreshToken: string) => server.token({ grantType: "refresh_token", clientId, refreshToken });
  const oauthError = (code: string) => expect.objectContaining({ extensions: expect.objectContaining({ oauth_error: code }) });
  const eventsOf = (accountId: string) =>
    db.selectFrom("account_events").select(["action", "actor", "detail"]).where("account_id", "=", accountId).orderBy("at").execute();

  it("a code lives a minute; a consent request ten minutes", async () => {
    const { clientId, code } = await consented();
    later(CODE_TTL_SECONDS);
    await expect(exchange(clientId, code)).rejects.toEqual(oauthError("invalid_grant"));

    const { client } = await server.register({ redirectUris: [CALLBACK], grantTypes: [], responseTypes: [], tokenEndpointAuthMethod: "none" });
    const signedIn = await account();
    const pending = await server.authorize({
      clientId: client.id,
      redirectUri: CALLBACK,
      responseType: "code",
      scope: "checkouts.write",
      codeChallenge: CHALLENGE,
      codeChallengeMethod: "S256",
      signedIn,
    });
    later(REQUEST_TTL_SECONDS);
    await expect(server.decide({ requestId: pending.requestId!, csrfToken: pending.csrfToken!, ...signedIn, allow: true })).rejects.toMatchObject({
      slug: "bad-request",
    });
  });

  it("an access token lives an hour at the audience its scopes reach", async () => {
    const { clientId, code } = await consented();
    const tokens = await exchange(clientId, code);
    await expect(server.resolve(tokens.accessToken, "rest")).resolves.toMatchObject({ clientId, rung: "payments" });
    await expect(server.resolve(tokens.accessToken, "mcp")).rejects.toMatchObject({ slug: "unauthenticated" });
    later(ACCESS_TOKEN_TTL_SECONDS);
    await expect(server.resolve(tokens.accessToken, "rest")).rejects.toMatchObject({ slug: "unauthenticated" });
    // The refresh token still renews it.
    const renewed = await refresh(clientId, tokens.refreshToken);
    await expect(server.resolve(renewed.accessToken, "rest")).resolves.toMatchObject({ clientId });
  });

  it("a connection idle six months must be authorized again; a refresh within them starts the six months again", async () => {
    const { clientId, code, accountId } = await consented("mcp.write");
    const first = await exchange(clientId, code);
    later(REFRESH_IDLE_SECONDS - 60);
    const second = await refresh(clientId, first.refreshToken);
    later(REFRESH_IDLE_SECONDS - 60);
    const third = await refresh(clientId, second.refreshToken);
    later(REFRESH_IDLE_SECONDS);
    await expect(refresh(clientId, third.refreshToken)).rejects.toEqual(oauthError("invalid_grant"));
    const events = await eventsOf(accountId);
    expect(events.map((e) => [e.action, e.actor])).toEqual([
      ["oauth.granted", `oauth:${clientId}`],
      ["oauth.revoked", `oauth:${clientId}`],
    ]);
    expect(events[1]?.detail).toEqual({ client_id: clientId, because: "idle" });
  });

  it("two refreshes racing with one token: one rotates, the other is a replay that revokes the grant (no grace window)", async () => {
    const { clientId, code } = await consented();
    const tokens = await exchange(clientId, code);
    const outcomes = await Promise.allSettled([refresh(clientId, tokens.refreshToken), refresh(clientId, tokens.refreshToken)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
    const winner = outcomes.find((o): o is PromiseFulfilledResult<Awaited<ReturnType<typeof refresh>>> => o.status === "fulfilled")!.value;
    await expect(server.resolve(winner.accessToken, "rest")).rejects.toMatchObject({ slug: "unauthenticated" });
    await expect(refresh(clientId, winner.refreshToken)).rejects.toEqual(oauthError("invalid_grant"));
  });

  it("a token of one client is refused to another, and revocation by another client changes nothing", async () => {
    const a = await consented();
    const b = await consented();
    const tokens = await exchange(a.clientId, a.code);
    await expect(refresh(b.clientId, tokens.refreshToken)).rejects.toEqual(oauthError("invalid_grant"));
    await server.revoke({ token: tokens.refreshToken, clientId: b.clientId });
    await expect(server.resolve(tokens.accessToken, "rest")).resolves.toMatchObject({ clientId: a.clientId });
    // Its own revocation ends it, and a second one records nothing more.
    await server.revoke({ token: tokens.accessToken, clientId: a.clientId });
    await server.revoke({ token: tokens.accessToken, clientId: a.clientId });
    await expect(server.resolve(tokens.accessToken, "rest")).rejects.toMatchObject({ slug: "unauthenticated" });
    expect((await eventsOf(a.accountId)).map((e) => e.action)).toEqual(["oauth.granted", "oauth.revoked"]);
  });

  it("open registration stays bounded: a client that never connected is deleted after thirty days; one that did stays", async () => {
    const { client: unused } = await server.register({ redirectUris: [CALLBACK], grantTypes: [], responseTypes: [], tokenEndpointAuthMethod: "none" });
    const used = await consented();
    later(UNUSED_CLIENT_TTL_SECONDS - 60);
    await server.register({ redirectUris: [CALLBACK], grantTypes: [], responseTypes: [], tokenEndpointAuthMethod: "none" });
    expect(await db.selectFrom("oauth_clients").select("id").where("id", "=", unused.id).executeTakeFirst()).toBeDefined();
    later(120);
    await server.register({ redirectUris: [CALLBACK], grantTypes: [], responseTypes: [], tokenEndpointAuthMethod: "none" });
    expect(await db.selectFrom("oauth_clients").select("id").where("id", "=", unused.id).executeTakeFirst()).toBeUndefined();
    expect(await db.selectFrom("oauth_clients").select("id").where("id", "=", used.clientId).executeTakeFirst()).toBeDefined();
  });

  it("stores hashes only: no code, token or secret appears in any row", async () => {
    const { client, secret } = await server.register({ redirectUris: ["https://app.example/cb"], grantTypes: [], responseTypes: [] });
    const { clientId, code } = await consented();
    const tokens = await exchange(clientId, code);
    const dump = JSON.stringify(
      await Promise.all(
        (["oauth_clients", "oauth_grants", "oauth_codes", "oauth_tokens", "oauth_requests"] as const).map((t) => db.selectFrom(t).selectAll().execute()),
      ),
    );
    for (const value of [secret!, code, tokens.accessToken, tokens.refreshToken]) expect(dump).not.toContain(value);
    expect(dump).toContain(client.id);
  });
});
