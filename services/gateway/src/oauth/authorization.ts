import { credentialKindName, identityV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import type { GatewayDeps } from "../http/deps";
import { oauthIssuer } from "../http/oauth-metadata";
import { isSessionToken } from "../http/session-cookie";
import { oauthConsentPage, oauthErrorPage, oauthSignInPage, type OAuthPage } from "../views/oauth-pages";
import { oauthCodeOf } from "./oauth-errors";
import { presentParams, singleParams } from "./request-params";

const AUTHORIZE_PARAMS = ["client_id", "redirect_uri", "response_type", "scope", "resource", "code_challenge", "code_challenge_method", "state"] as const;
const OPTIONAL_AUTHORIZE_PARAMS = ["scope", "resource", "code_challenge", "code_challenge_method", "state"] as const;

/** What the browser endpoints answer: a page, or a 303 to the client (`noStore`: the answer must not be cached). */
export type BrowserAnswer = { page: OAuthPage } | { redirectTo: string; noStore: boolean };

/**
 * The authorization endpoint and the consent screen's answer (RFC 6749 §4.1),
 * apart from HTTP: each takes the browser's session cookie as sent and
 * answers a page or the redirect back to the client. Identity keeps the
 * requests and decides; this picks the page and builds the redirect.
 */
export class OAuthAuthorization {
  private readonly issuer: string;

  constructor(private readonly deps: Pick<GatewayDeps, "clients" | "settings">) {
    this.issuer = oauthIssuer(deps.settings.baseUrl);
  }

  /** GET /oauth/authorize: the consent screen, sign-in on the page when there is no session, or an error (to the client only once that is safe). */
  async authorize(query: unknown, sessionCookie: string | undefined, returnTo: string): Promise<BrowserAnswer> {
    let params: ReturnType<typeof singleParams>;
    try {
      params = singleParams(query, AUTHORIZE_PARAMS);
    } catch (err) {
      return { page: oauthErrorPage(400, (err as ProblemError).message) };
    }
    const signedIn = await this.signedIn(sessionCookie);
    let started: identityV1.StartOAuthAuthorizationResponse;
    try {
      started = await this.deps.clients.identity.startOAuthAuthorization({
        clientId: params.client_id ?? "",
        redirectUri: params.redirect_uri ?? "",
        responseType: params.response_type ?? "",
        ...presentParams(params, OPTIONAL_AUTHORIZE_PARAMS),
        ...(signedIn ? { signedIn } : {}),
      });
    } catch (err) {
      // An outage is the error handler's (logged, with Retry-After), not the client's.
      if (!(err instanceof ProblemError) || err.status >= 500) throw err;
      // Errors go back to the client only once its redirect URI is proven and a user is signed in (RFC 9700 §4.11.2: no open redirector).
      if (err.extensions?.oauth_redirect === true && signedIn && params.redirect_uri !== undefined) {
        const outcome = { error: oauthCodeOf(err), error_description: err.message, state: params.state };
        return { redirectTo: this.redirectTo(params.redirect_uri, outcome), noStore: false };
      }
      return { page: oauthErrorPage(err.status === 429 ? 429 : 400, err.message) };
    }
    const client = answered(started.client, "client");
    const facts = { name: client.clientName, clientId: client.clientId, redirectUri: params.redirect_uri ?? "" };
    if (!signedIn || started.requestId === undefined || started.csrfToken === undefined) {
      return { page: oauthSignInPage(facts, started.scopes, returnTo) };
    }
    return { page: oauthConsentPage(facts, started.scopes, started.requestId, started.csrfToken) };
  }

  /** POST /oauth/consent: the user's Allow or Deny, back to the client with a code or access_denied. */
  async consent(form: unknown, sessionCookie: string | undefined): Promise<BrowserAnswer> {
    const signedIn = await this.signedIn(sessionCookie);
    if (!signedIn) return { page: oauthErrorPage(401, "You are not signed in any more. Start again from the application.") };
    const params = singleParams(form, ["request_id", "csrf_token", "decision"]);
    if (params.decision !== "allow" && params.decision !== "deny") return { page: oauthErrorPage(400, "Choose Allow or Deny.") };
    let decided: identityV1.DecideOAuthConsentResponse;
    try {
      decided = await this.deps.clients.identity.decideOAuthConsent({
        requestId: params.request_id ?? "",
        csrfToken: params.csrf_token ?? "",
        signedIn,
        allow: params.decision === "allow",
      });
    } catch (err) {
      if (!(err instanceof ProblemError) || err.status >= 500) throw err;
      return { page: oauthErrorPage(err.status === 429 ? 429 : 400, err.message) };
    }
    const outcome = decided.code !== undefined ? { code: decided.code } : { error: decided.error, error_description: decided.errorDescription };
    return { redirectTo: this.redirectTo(decided.redirectUri, { ...outcome, state: decided.state }), noStore: true };
  }

  /** The browser's signed-in session (the cookie only), or undefined: a stale cookie is no session. */
  private async signedIn(sessionCookie: string | undefined): Promise<identityV1.SignedIn | undefined> {
    if (sessionCookie === undefined || !isSessionToken(sessionCookie)) return undefined;
    try {
      const r = await this.deps.clients.identity.resolveCredential({ secret: sessionCookie });
      if (credentialKindName(r.kind) !== "session") return undefined;
      return { $typeName: "identity.v1.SignedIn", accountId: r.accountId, sessionId: r.keyId };
    } catch (err) {
      if (err instanceof ProblemError && err.slug === "unauthenticated") return undefined;
      throw err;
    }
  }

  /** The authorization response (RFC 6749 §4.1.2, RFC 9207): the redirect URI with the outcome, `state` and `iss` added to its query. */
  private redirectTo(redirectUri: string, outcome: Record<string, string | undefined>): string {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries({ ...outcome, iss: this.issuer })) if (value !== undefined) url.searchParams.append(name, value);
    return url.href;
  }
}
