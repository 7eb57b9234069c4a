import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { credentialKindName, identityV1 } from "@c402/contracts";
import express, { Router, type NextFunction, type Request, type Response } from "express";
import { oauthConsentPage, oauthErrorPage, oauthSignInPage, type OAuthPage } from "../../views/oauth-pages";
import type { GatewayDeps } from "../deps";
import { boundedJsonBodies } from "../json-bounds";
import { jsonBody } from "../json-body";
import { authorizationServerMetadata, oauthIssuer, protectedResourceMetadata } from "../oauth-metadata";
import { rateLimit } from "../rate-limit";
import { isSessionToken, sessionCookieOf, sessionCookiesOf } from "../session-cookie";

/**
 * The OAuth 2.1 authorization server's HTTP face (identity keeps its state and
 * rules; docs/adr/0012-oauth-server.md):
 *
 *   GET  /.well-known/oauth-authorization-server[/mcp]   RFC 8414 metadata (one document at both)
 *   GET  /.well-known/oauth-protected-resource[/mcp]     RFC 9728: the REST API, and /mcp
 *   POST /oauth/register    RFC 7591 dynamic registration (JSON)
 *   GET  /oauth/authorize   the consent screen (sign-in on the page when there is no session)
 *   POST /oauth/consent     the screen's answer (session cookie + CSRF token): 303 to the client
 *   POST /oauth/token       authorization_code (PKCE S256) and refresh_token (rotating)
 *   POST /oauth/revoke      RFC 7009
 *
 * The token, registration and revocation endpoints answer OAuth errors
 * (`{error, error_description}`), not problem documents; the two browser
 * endpoints answer pages. CORS is open on everything but the browser
 * endpoints (RFC 9700 §2.6).
 */

/** A form body: the token endpoint's parameters are small. */
const FORM_BYTES = 16 * 1024;
const REGISTER_BYTES = 32 * 1024;

type Params = Record<string, string | undefined>;

/** The parameters of a query or a form, each once (RFC 6749 §3.1: a repeated parameter is an invalid request). */
function singleParams(source: unknown, names: readonly string[]): Params {
  const bag = (source ?? {}) as Record<string, unknown>;
  const out: Params = {};
  for (const name of names) {
    const value = bag[name];
    if (value === undefined) continue;
    if (typeof value !== "string") throw oauthFailure("invalid_request", `The parameter ${name} must be sent once.`);
    if (value !== "") out[name] = value;
  }
  return out;
}

function oauthFailure(code: string, description: string, status = 400): ProblemError {
  return new ProblemError(status === 401 ? "unauthenticated" : "bad-request", { message: description, extensions: { oauth_error: code } });
}

const oauthCodeOf = (err: unknown): string | undefined =>
  err instanceof ProblemError && typeof err.extensions?.oauth_error === "string" ? err.extensions.oauth_error : undefined;

/** Open CORS: these endpoints authenticate by what the request carries, never by a cookie. */
function openCors(req: Request, res: Response, next: NextFunction): void {
  res.setHeader("Access-Control-Allow-Origin", "*");
  if (req.method === "OPTIONS") {
    res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    res.setHeader("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version");
    res.setHeader("Access-Control-Max-Age", "600");
    res.status(204).end();
    return;
  }
  next();
}

/** Only a form body (RFC 6749 §4.1.3); anything else is refused before it is read. */
function formBody(req: Request, res: Response, next: NextFunction): void {
  if (!req.is("application/x-www-form-urlencoded")) {
    throw oauthFailure("invalid_request", "Send the parameters as application/x-www-form-urlencoded.");
  }
  express.urlencoded({ extended: false, limit: FORM_BYTES, parameterLimit: 50 })(req, res, next);
}

/**
 * RFC 6749 §2.3.1: HTTP Basic (each part form-urlencoded) or the body's
 * client_id/client_secret, never both ways at once.
 */
function clientCredentials(req: Request, params: Params): { clientId?: string; clientSecret?: string } {
  const header = req.get("authorization");
  if (header === undefined) {
    return {
      ...(params.client_id !== undefined ? { clientId: params.client_id } : {}),
      ...(params.client_secret !== undefined ? { clientSecret: params.client_secret } : {}),
    };
  }
  const basic = /^basic[ \t]+([A-Za-z0-9+/=]{1,2048})[ \t]*$/i.exec(header);
  if (!basic) throw oauthFailure("invalid_client", "The Authorization header must be HTTP Basic with the client's id and secret.", 401);
  if (params.client_secret !== undefined)
    throw oauthFailure("invalid_request", "Authenticate the client one way: HTTP Basic or client_secret in the body, not both.");
  const decoded = Buffer.from(basic[1] ?? "", "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) throw oauthFailure("invalid_client", "HTTP Basic must carry client_id:client_secret.", 401);
  let clientId: string;
  let clientSecret: string;
  try {
    const form = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
    clientId = form(decoded.slice(0, colon));
    clientSecret = form(decoded.slice(colon + 1));
  } catch {
    throw oauthFailure("invalid_client", "HTTP Basic's client_id and client_secret must be form-urlencoded.", 401);
  }
  if (params.client_id !== undefined && params.client_id !== clientId)
    throw oauthFailure("invalid_request", "client_id differs from the one HTTP Basic names.");
  return { clientId, clientSecret };
}

const AUTHORIZE_PARAMS = ["client_id", "redirect_uri", "response_type", "scope", "resource", "code_challenge", "code_challenge_method", "state"] as const;
const TOKEN_PARAMS = ["grant_type", "code", "code_verifier", "redirect_uri", "refresh_token", "resource", "scope", "client_id", "client_secret"] as const;

/** RFC 7591 client metadata as sent: each field of the right JSON type, or 400 invalid_client_metadata naming it. */
function registrationOf(body: unknown): identityV1.RegisterOAuthClientRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw oauthFailure("invalid_client_metadata", "Send the client metadata as a JSON object.");
  const m = body as Record<string, unknown>;
  const text = (name: string): string | undefined => {
    const v = m[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") throw oauthFailure("invalid_client_metadata", `${name} must be a string.`);
    return v;
  };
  const list = (name: string): string[] => {
    const v = m[name];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
      throw oauthFailure(name === "redirect_uris" ? "invalid_redirect_uri" : "invalid_client_metadata", `${name} must be an array of strings.`);
    }
    return v as string[];
  };
  const optional = (name: string) => {
    const v = text(name);
    return v === undefined ? {} : { [name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())]: v };
  };
  return {
    $typeName: "identity.v1.RegisterOAuthClientRequest",
    redirectUris: list("redirect_uris"),
    grantTypes: list("grant_types"),
    responseTypes: list("response_types"),
    ...optional("client_name"),
    ...optional("token_endpoint_auth_method"),
    ...optional("application_type"),
    ...optional("scope"),
  };
}

export function oauthRoutes({ clients, cache, settings }: GatewayDeps): Router {
  const router = Router();
  const issuer = oauthIssuer(settings.baseUrl);
  const docsUrl = `${settings.siteUrl}/docs`;
  // Registration and the consent pages are sign-in traffic; the token endpoint serves every refresh of
  // every connection a server-side integration holds, from one address: ten times as many.
  const perClient = rateLimit(cache, { name: "oauth", limit: settings.authRateLimitPerMinute, windowSeconds: 60 });
  const perClientTokens = rateLimit(cache, { name: "oauth-token", limit: settings.authRateLimitPerMinute * 10, windowSeconds: 60 });

  const sendPage = (res: Response, p: OAuthPage) => {
    for (const [name, value] of p.headers) res.setHeader(name, value);
    res.status(p.status).send(p.html);
  };

  /** The browser's signed-in session (the cookie only), or undefined: a stale cookie is no session. */
  const browserSession = async (req: Request): Promise<identityV1.SignedIn | undefined> => {
    const token = sessionCookieOf(req);
    if (token === undefined || !isSessionToken(token)) return undefined;
    try {
      const r = await clients.identity.resolveCredential({ secret: token });
      if (credentialKindName(r.kind) !== "session") return undefined;
      return { $typeName: "identity.v1.SignedIn", accountId: r.accountId, sessionId: r.keyId };
    } catch (err) {
      if (err instanceof ProblemError && err.slug === "unauthenticated") return undefined;
      throw err;
    }
  };

  /** The authorization response (RFC 6749 §4.1.2, RFC 9207): the redirect URI with the outcome, `state` and `iss` added to its query. */
  const redirectTo = (redirectUri: string, outcome: Record<string, string | undefined>): string => {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries({ ...outcome, iss: issuer })) if (value !== undefined) url.searchParams.append(name, value);
    return url.href;
  };

  for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/mcp"]) {
    router.get(path, openCors, (_req, res) => {
      res.setHeader("Cache-Control", "public, max-age=300");
      res.json(authorizationServerMetadata(settings.baseUrl, docsUrl));
    });
  }
  router.get("/.well-known/oauth-protected-resource", openCors, (_req, res) => {
    res.setHeader("Cache-Control", "public, max-age=300");
    res.json(protectedResourceMetadata(settings.baseUrl, "rest", settings.serviceName, docsUrl));
  });
  router.get("/.well-known/oauth-protected-resource/mcp", openCors, (_req, res) => {
    res.setHeader("Cache-Control", "public, max-age=300");
    res.json(protectedResourceMetadata(settings.baseUrl, "mcp", settings.serviceName, docsUrl));
  });

  router.use(["/oauth/register", "/oauth/token", "/oauth/revoke"], openCors);

  router.post("/oauth/register", perClient, ...jsonBody(REGISTER_BYTES), boundedJsonBodies, async (req, res) => {
    const r = await clients.identity.registerOAuthClient(registrationOf(req.body));
    const c = answered(r.client, "client");
    res.setHeader("Cache-Control", "no-store");
    res.status(201).json({
      client_id: c.clientId,
      client_id_issued_at: Math.floor(Number(c.createdAt?.seconds ?? 0n)),
      ...(r.clientSecret !== undefined ? { client_secret: r.clientSecret, client_secret_expires_at: 0 } : {}),
      ...(c.clientName !== undefined ? { client_name: c.clientName } : {}),
      redirect_uris: c.redirectUris,
      grant_types: c.grantTypes,
      response_types: c.responseTypes,
      token_endpoint_auth_method: c.tokenEndpointAuthMethod,
      application_type: c.applicationType,
      ...(c.scope !== undefined ? { scope: c.scope } : {}),
    });
  });

  router.get("/oauth/authorize", perClient, async (req, res) => {
    let params: Params;
    try {
      params = singleParams(req.query, AUTHORIZE_PARAMS);
    } catch (err) {
      return sendPage(res, oauthErrorPage(400, (err as ProblemError).message));
    }
    const signedIn = await browserSession(req);
    let started: identityV1.StartOAuthAuthorizationResponse;
    try {
      started = await clients.identity.startOAuthAuthorization({
        clientId: params.client_id ?? "",
        redirectUri: params.redirect_uri ?? "",
        responseType: params.response_type ?? "",
        ...(params.scope !== undefined ? { scope: params.scope } : {}),
        ...(params.resource !== undefined ? { resource: params.resource } : {}),
        ...(params.code_challenge !== undefined ? { codeChallenge: params.code_challenge } : {}),
        ...(params.code_challenge_method !== undefined ? { codeChallengeMethod: params.code_challenge_method } : {}),
        ...(params.state !== undefined ? { state: params.state } : {}),
        ...(signedIn ? { signedIn } : {}),
      });
    } catch (err) {
      // An outage is the error handler's (logged, with Retry-After), not the client's.
      if (!(err instanceof ProblemError) || err.status >= 500) throw err;
      // Errors go back to the client only once its redirect URI is proven and a user is signed in (RFC 9700 §4.11.2: no open redirector).
      if (err.extensions?.oauth_redirect === true && signedIn && params.redirect_uri !== undefined) {
        return void res.redirect(303, redirectTo(params.redirect_uri, { error: oauthCodeOf(err), error_description: err.message, state: params.state }));
      }
      return sendPage(res, oauthErrorPage(err.status === 429 ? 429 : 400, err.message));
    }
    const client = answered(started.client, "client");
    const facts = { name: client.clientName, clientId: client.clientId, redirectUri: params.redirect_uri ?? "" };
    if (!signedIn || started.requestId === undefined || started.csrfToken === undefined) {
      return sendPage(res, oauthSignInPage(facts, started.scopes, req.originalUrl));
    }
    sendPage(res, oauthConsentPage(facts, started.scopes, started.requestId, started.csrfToken));
  });

  router.post("/oauth/consent", perClient, formBody, async (req, res) => {
    // A form post by this site's own page: another site cannot submit it for the user (CSRF, with the token below).
    sessionCookiesOf(req).refuseCrossSite(req);
    const signedIn = await browserSession(req);
    if (!signedIn) return sendPage(res, oauthErrorPage(401, "You are not signed in any more. Start again from the application."));
    const params = singleParams(req.body, ["request_id", "csrf_token", "decision"]);
    if (params.decision !== "allow" && params.decision !== "deny") return sendPage(res, oauthErrorPage(400, "Choose Allow or Deny."));
    let decided: identityV1.DecideOAuthConsentResponse;
    try {
      decided = await clients.identity.decideOAuthConsent({
        requestId: params.request_id ?? "",
        csrfToken: params.csrf_token ?? "",
        signedIn,
        allow: params.decision === "allow",
      });
    } catch (err) {
      if (!(err instanceof ProblemError) || err.status >= 500) throw err;
      return sendPage(res, oauthErrorPage(err.status === 429 ? 429 : 400, err.message));
    }
    // 303: the browser follows with a GET, never re-posting the form (RFC 9700 §4.12).
    res.setHeader("Cache-Control", "no-store");
    res.redirect(
      303,
      redirectTo(decided.redirectUri, {
        ...(decided.code !== undefined ? { code: decided.code } : { error: decided.error, error_description: decided.errorDescription }),
        state: decided.state,
      }),
    );
  });

  router.post("/oauth/token", perClientTokens, formBody, async (req, res) => {
    const params = singleParams(req.body, TOKEN_PARAMS);
    if (params.grant_type === undefined) throw oauthFailure("invalid_request", "grant_type is required.");
    const client = clientCredentials(req, params);
    const t = await clients.identity.exchangeOAuthToken({
      grantType: params.grant_type,
      ...(params.code !== undefined ? { code: params.code } : {}),
      ...(params.code_verifier !== undefined ? { codeVerifier: params.code_verifier } : {}),
      ...(params.redirect_uri !== undefined ? { redirectUri: params.redirect_uri } : {}),
      ...(params.refresh_token !== undefined ? { refreshToken: params.refresh_token } : {}),
      ...(params.resource !== undefined ? { resource: params.resource } : {}),
      ...(params.scope !== undefined ? { scope: params.scope } : {}),
      ...client,
    });
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("Pragma", "no-cache");
    res.json({ access_token: t.accessToken, token_type: "Bearer", expires_in: t.expiresIn, refresh_token: t.refreshToken, scope: t.scope });
  });

  router.post("/oauth/revoke", perClientTokens, formBody, async (req, res) => {
    const params = singleParams(req.body, ["token", "token_type_hint", "client_id", "client_secret"]);
    if (params.token === undefined) throw oauthFailure("invalid_request", "token is required.");
    await clients.identity.revokeOAuthToken({ token: params.token, ...clientCredentials(req, params) });
    res.setHeader("Cache-Control", "no-store");
    res.status(200).end();
  });

  // OAuth errors as RFC 6749 §5.2 and RFC 7591 §3.2.2 write them; everything else goes on to the problem documents.
  router.use(["/oauth/register", "/oauth/token", "/oauth/revoke"], (err: unknown, req: Request, res: Response, next: NextFunction) => {
    let code = oauthCodeOf(err);
    const type = (err as { type?: unknown } | null)?.type;
    if (code === undefined && (type === "entity.parse.failed" || (err instanceof ProblemError && err.slug === "invalid-request"))) {
      code = req.baseUrl === "/oauth/register" ? "invalid_client_metadata" : "invalid_request";
    }
    if (code === undefined) return next(err);
    const status = code === "invalid_client" ? 401 : 400;
    if (status === 401 && req.get("authorization") !== undefined)
      res.setHeader("WWW-Authenticate", `Basic realm="${settings.serviceName.replace(/["\\]/g, "")}"`);
    res.setHeader("Cache-Control", "no-store");
    const description = err instanceof ProblemError ? err.message : "The request body is not valid.";
    res.status(status).json({ error: code, error_description: description });
  });

  return router;
}
