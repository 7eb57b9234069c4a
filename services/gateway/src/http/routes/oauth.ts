import express, { Router, type NextFunction, type Request, type Response } from "express";
import { OAuthAuthorization, type BrowserAnswer } from "../../oauth/authorization";
import { registerOAuthClient } from "../../oauth/client-registration";
import { oauthErrorOf, oauthFailure } from "../../oauth/oauth-errors";
import { exchangeOAuthToken, revokeOAuthToken } from "../../oauth/tokens";
import type { GatewayDeps } from "../deps";
import { boundedJsonBodies } from "../json-bounds";
import { jsonBody } from "../json-body";
import { authorizationServerMetadata, protectedResourceMetadata } from "../oauth-metadata";
import { rateLimit } from "../rate-limit";
import { sessionCookieOf, sessionCookiesOf } from "../session-cookie";

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
/** The endpoints a client calls itself: open CORS, and OAuth error bodies. */
const CLIENT_ENDPOINTS = ["/oauth/register", "/oauth/token", "/oauth/revoke"];

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

export function oauthRoutes(deps: GatewayDeps): Router {
  const { cache, settings } = deps;
  const router = Router();
  const authorization = new OAuthAuthorization(deps);
  const docsUrl = `${settings.siteUrl}/docs`;
  // Registration and the consent pages are sign-in traffic; the token endpoint serves every refresh of
  // every connection a server-side integration holds, from one address: ten times as many.
  const perClient = rateLimit(cache, { name: "oauth", limit: settings.authRateLimitPerMinute, windowSeconds: 60 });
  const perClientTokens = rateLimit(cache, { name: "oauth-token", limit: settings.authRateLimitPerMinute * 10, windowSeconds: 60 });

  const serverMetadata = publicDocument(() => authorizationServerMetadata(settings.baseUrl, docsUrl));
  const resourceMetadata = (resource: "rest" | "mcp") =>
    publicDocument(() => protectedResourceMetadata(settings.baseUrl, resource, settings.serviceName, docsUrl));

  for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/mcp"]) router.get(path, openCors, serverMetadata);
  router.get("/.well-known/oauth-protected-resource", openCors, resourceMetadata("rest"));
  router.get("/.well-known/oauth-protected-resource/mcp", openCors, resourceMetadata("mcp"));

  router.use(CLIENT_ENDPOINTS, openCors);

  router.post("/oauth/register", perClient, ...jsonBody(REGISTER_BYTES), boundedJsonBodies, async (req, res) => {
    const registered = await registerOAuthClient(deps, req.body);
    res.setHeader("Cache-Control", "no-store");
    res.status(201).json(registered);
  });

  router.get("/oauth/authorize", perClient, async (req, res) => {
    sendBrowserAnswer(res, await authorization.authorize(req.query, sessionCookieOf(req), req.originalUrl));
  });

  router.post("/oauth/consent", perClient, formBody, async (req, res) => {
    // A form post by this site's own page: another site cannot submit it for the user (CSRF, with the token the form carries).
    sessionCookiesOf(req).refuseCrossSite(req);
    sendBrowserAnswer(res, await authorization.consent(req.body, sessionCookieOf(req)));
  });

  router.post("/oauth/token", perClientTokens, formBody, async (req, res) => {
    const token = await exchangeOAuthToken(deps, req.body, req.get("authorization"));
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("Pragma", "no-cache");
    res.json(token);
  });

  router.post("/oauth/revoke", perClientTokens, formBody, async (req, res) => {
    await revokeOAuthToken(deps, req.body, req.get("authorization"));
    res.setHeader("Cache-Control", "no-store");
    res.status(200).end();
  });

  // OAuth errors as RFC 6749 §5.2 and RFC 7591 §3.2.2 write them; everything else goes on to the problem documents.
  router.use(CLIENT_ENDPOINTS, (err: unknown, req: Request, res: Response, next: NextFunction) => {
    const failure = oauthErrorOf(err, req.baseUrl);
    if (!failure) return next(err);
    if (failure.status === 401 && req.get("authorization") !== undefined)
      res.setHeader("WWW-Authenticate", `Basic realm="${settings.serviceName.replace(/["\\]/g, "")}"`);
    res.setHeader("Cache-Control", "no-store");
    res.status(failure.status).json(failure.body);
  });

  return router;
}

/** A discovery document: public, and the same for a while. */
const publicDocument = (document: () => object) => (_req: Request, res: Response) => {
  res.setHeader("Cache-Control", "public, max-age=300");
  res.json(document());
};

/** A browser endpoint's answer: the page, or 303 so the browser follows with a GET, never re-posting a form (RFC 9700 §4.12). */
function sendBrowserAnswer(res: Response, answer: BrowserAnswer): void {
  if ("page" in answer) {
    for (const [name, value] of answer.page.headers) res.setHeader(name, value);
    return void res.status(answer.page.status).send(answer.page.html);
  }
  if (answer.noStore) res.setHeader("Cache-Control", "no-store");
  res.redirect(303, answer.redirectTo);
}
