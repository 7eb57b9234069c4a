import type { Actor } from "@c402/account-events";
import { isId, newId, randomBase62 } from "@c402/ids";
import { ProblemError } from "@c402/problems";
import type { IdentityDb } from "../store/identity-store";
import { oauthStore as store, type OAuthClientRow, type OAuthGrantRow } from "../store/oauth-store";
import { recordActivity } from "./account-events";
import { secretMatches, sha256Hex } from "./stored-secrets";
import {
  grantedScopes,
  isPkceValue,
  oauthError,
  OAuthResources,
  pkceVerifies,
  redirectUriMatches,
  resourceFits,
  rungAt,
  validateClientMetadata,
  type Audience,
  type ClientMetadataInput,
  type OAuthScope,
} from "./oauth-rules";

/** An access token lives an hour: short, as RFC 9700 asks; the refresh token renews it. */
export const ACCESS_TOKEN_TTL_SECONDS = 60 * 60;
/** A code is exchanged within a minute of the consent, or never (node-oidc-provider's default). */
export const CODE_TTL_SECONDS = 60;
/** How long a consent screen may wait for its click. */
export const REQUEST_TTL_SECONDS = 10 * 60;
/** A connection idle this long (no refresh) must be authorized again: six months (spec, OAuth server; RFC 9700 §4.14.2). */
export const REFRESH_IDLE_SECONDS = 183 * 24 * 60 * 60;
const PURGE_BATCH = 100;
/** A registered client that has not connected within this long is deleted (it can register again). */
export const UNUSED_CLIENT_TTL_SECONDS = 30 * 24 * 60 * 60;
const MAX_STATE_LENGTH = 1024;

const ACCESS_TOKEN = /^oat_[0-9A-Za-z]{32}$/;
const REFRESH_TOKEN = /^ort_[0-9A-Za-z]{32}$/;
const CODE = /^oac_[0-9A-Za-z]{32}$/;
const CSRF = /^[0-9A-Za-z]{32}$/;

export function isWellFormedAccessToken(token: string): boolean {
  return ACCESS_TOKEN.test(token);
}

export const oauthActor = (clientId: string): Actor => `oauth:${clientId}`;

export interface RegisteredClient {
  client: OAuthClientRow;
  /** A confidential client's secret, shown once. */
  secret?: string;
}

export interface AuthorizationInput {
  clientId: string;
  redirectUri: string;
  responseType: string;
  scope?: string | undefined;
  resource?: string | undefined;
  codeChallenge?: string | undefined;
  codeChallengeMethod?: string | undefined;
  state?: string | undefined;
  /** The signed-in user; without one the request is only checked (the page asks to sign in first). */
  signedIn?: { accountId: string; sessionId: string } | undefined;
}

export interface PendingAuthorization {
  client: OAuthClientRow;
  scopes: OAuthScope[];
  resource: string;
  /** Set when a user is signed in: the consent form carries these two and nothing else. */
  requestId?: string;
  csrfToken?: string;
  expiresAt?: Date;
}

export interface ConsentDecision {
  redirectUri: string;
  state: string | null;
  code?: string;
  error?: { code: "access_denied"; description: string };
}

export interface TokenRequest {
  grantType: string;
  code?: string | undefined;
  codeVerifier?: string | undefined;
  redirectUri?: string | undefined;
  refreshToken?: string | undefined;
  resource?: string | undefined;
  scope?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  scope: string;
}

export interface ResolvedOAuthToken {
  grantId: string;
  accountId: string;
  clientId: string;
  rung: "read_only" | "payments" | "full";
  expiresAt: Date;
}

type RevokedBecause = "revoked_by_client" | "code_reused" | "refresh_token_reused" | "idle";

/**
 * The OAuth 2.1 authorization server's rules (docs/adr/0012-oauth-server.md):
 * dynamic registration, the consent request, codes with PKCE S256, access
 * tokens, refresh tokens that rotate on every use (a spent one presented
 * again revokes the whole grant, RFC 9700 §4.14.2), six months' idle expiry,
 * and revocation. Every value handed out is random and stored as its SHA-256
 * only. Every grant and revocation is an account event with actor `oauth:<client>`.
 */
export class OAuthServer {
  readonly resources: OAuthResources;

  constructor(
    private readonly db: IdentityDb,
    settings: { baseUrl: string },
    private readonly now: () => Date = () => new Date(),
  ) {
    this.resources = new OAuthResources(settings.baseUrl);
  }

  async register(input: ClientMetadataInput): Promise<RegisteredClient> {
    const metadata = validateClientMetadata(input);
    const secret = metadata.tokenEndpointAuthMethod === "none" ? undefined : `ocs_${randomBase62(32)}`;
    const at = this.now();
    await store.deleteAbandonedClients(this.db, new Date(at.getTime() - UNUSED_CLIENT_TTL_SECONDS * 1000), PURGE_BATCH);
    const client = await store.insertClient(this.db, {
      id: newId("oauthClient"),
      name: metadata.name,
      redirect_uris: metadata.redirectUris,
      grant_types: metadata.grantTypes,
      response_types: metadata.responseTypes,
      token_endpoint_auth_method: metadata.tokenEndpointAuthMethod,
      application_type: metadata.applicationType,
      scope: metadata.scope,
      secret_hash: secret === undefined ? null : sha256Hex(secret),
      created_at: at,
    });
    return { client, ...(secret !== undefined ? { secret } : {}) };
  }

  /**
   * Checks an authorization request (RFC 6749 §4.1.1 with PKCE required) and,
   * for a signed-in user, stores it for the consent. The client and its
   * redirect URI are checked first: until both are proven nothing is sent to
   * the URI (errors without `oauth_redirect`); after, errors may go back to it.
   */
  async authorize(input: AuthorizationInput): Promise<PendingAuthorization> {
    const client = await this.clientOf(input.clientId);
    if (!client) throw oauthError("invalid_request", "Unknown client_id: register the client first (POST /oauth/register).");
    if (input.redirectUri === "") throw oauthError("invalid_request", "redirect_uri is required.");
    if (!client.redirect_uris.some((registered) => redirectUriMatches(input.redirectUri, registered))) {
      throw oauthError("invalid_request", "redirect_uri is not one this client registered.");
    }
    const redirect = { redirect: true };
    if (input.responseType !== "code") throw oauthError("unsupported_response_type", "response_type must be code.", redirect);
    if (input.codeChallenge === undefined)
      throw oauthError("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256.", redirect);
    if (input.codeChallengeMethod !== "S256") throw oauthError("invalid_request", "code_challenge_method must be S256.", redirect);
    if (!isPkceValue(input.codeChallenge)) throw oauthError("invalid_request", "code_challenge must be 43 to 128 characters of base64url.", redirect);
    if (input.state !== undefined && input.state.length > MAX_STATE_LENGTH)
      throw oauthError("invalid_request", `state must be at most ${MAX_STATE_LENGTH} characters.`, redirect);
    const granted = grantedScopes(input.scope, input.resource, this.resources, client.scope, redirect);
    if (!input.signedIn) return { client, ...granted };

    const at = this.now();
    const csrfToken = randomBase62(32);
    const requestId = newId("oauthRequest");
    const expiresAt = new Date(at.getTime() + REQUEST_TTL_SECONDS * 1000);
    await store.purgeExpired(this.db, "oauth_requests", at, PURGE_BATCH);
    await store.insertRequest(this.db, {
      id: requestId,
      client_id: client.id,
      account_id: input.signedIn.accountId,
      session_id: input.signedIn.sessionId,
      redirect_uri: input.redirectUri,
      scopes: granted.scopes,
      resource: granted.resource,
      code_challenge: input.codeChallenge,
      state: input.state ?? null,
      csrf_hash: sha256Hex(csrfToken),
      expires_at: expiresAt,
    });
    return { client, ...granted, requestId, csrfToken, expiresAt };
  }

  /**
   * The user's answer on the consent screen. The request must be this
   * session's, unexpired, with its CSRF token; it is decided once. Allowing
   * creates the grant (an `oauth.granted` account event) and a code bound to
   * the client, the redirect URI, the PKCE challenge, the scopes and the resource.
   */
  async decide(input: { requestId: string; csrfToken: string; accountId: string; sessionId: string; allow: boolean }): Promise<ConsentDecision> {
    const refused = new ProblemError("bad-request", {
      message: "This consent request is unknown, expired or already answered, or belongs to another sign-in. Start again from the application.",
      extensions: { oauth_error: "invalid_request" },
    });
    if (!isId("oauthRequest", input.requestId) || !CSRF.test(input.csrfToken)) throw refused;
    const at = this.now();
    return this.db.transaction().execute(async (trx) => {
      const request = await store.lockRequest(trx, input.requestId);
      if (!request || request.expires_at <= at || request.account_id !== input.accountId || request.session_id !== input.sessionId) throw refused;
      if (!secretMatches(input.csrfToken, request.csrf_hash)) throw refused;
      await store.takeRequest(trx, request.id);
      if (!input.allow) {
        return { redirectUri: request.redirect_uri, state: request.state, error: { code: "access_denied", description: "The user declined." } };
      }
      const client = await store.findClient(trx, request.client_id);
      if (!client) throw refused;
      const grantId = newId("oauthGrant");
      await store.insertGrant(trx, {
        id: grantId,
        account_id: request.account_id,
        client_id: request.client_id,
        scopes: request.scopes,
        resource: request.resource,
        created_at: at,
        revoked_at: null,
        revoked_because: null,
      });
      const code = `oac_${randomBase62(32)}`;
      await store.purgeExpired(trx, "oauth_codes", at, PURGE_BATCH);
      await store.insertCode(trx, {
        code_hash: sha256Hex(code),
        grant_id: grantId,
        redirect_uri: request.redirect_uri,
        code_challenge: request.code_challenge,
        expires_at: new Date(at.getTime() + CODE_TTL_SECONDS * 1000),
        spent_at: null,
      });
      await recordActivity(trx, {
        accountId: request.account_id,
        action: "oauth.granted",
        objectId: grantId,
        detail: { client_id: client.id, client_name: client.name, scopes: request.scopes, resource: request.resource || null },
        actor: oauthActor(client.id),
        testMode: false,
        at,
      });
      return { redirectUri: request.redirect_uri, state: request.state, code };
    });
  }

  /** POST /oauth/token: `authorization_code` or `refresh_token`. */
  async token(input: TokenRequest): Promise<IssuedTokens> {
    if (input.grantType !== "authorization_code" && input.grantType !== "refresh_token") {
      throw oauthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token.");
    }
    const client = await this.authenticateClient(input);
    if (!client.grant_types.includes(input.grantType)) {
      throw oauthError("unauthorized_client", `This client did not register the grant type ${input.grantType}.`);
    }
    return input.grantType === "authorization_code" ? this.exchangeCode(client, input) : this.refresh(client, input);
  }

  /**
   * RFC 7009 revocation. A token of this client ends its whole grant (the
   * connection: every access and refresh token of it). An unknown token, or
   * another client's, is answered the same way and changes nothing.
   */
  async revoke(input: { token: string; clientId?: string | undefined; clientSecret?: string | undefined }): Promise<void> {
    const client = await this.authenticateClient(input);
    const row = await store.findToken(this.db, sha256Hex(input.token));
    if (!row) return;
    const grant = await store.findGrant(this.db, row.grant_id);
    if (!grant || grant.client_id !== client.id) return;
    await this.db.transaction().execute((trx) => this.revokeGrant(trx, grant, "revoked_by_client"));
  }

  /** An access token presented at the REST API or /mcp; 401 when it is unknown, expired, revoked, or does not reach this audience. */
  async resolve(token: string, audience: Audience): Promise<ResolvedOAuthToken> {
    const rejected = (message: string) =>
      new ProblemError("unauthenticated", {
        message,
        help: { fix: "Ask the application to connect again, or refresh its token (POST /oauth/token with grant_type=refresh_token)." },
      });
    if (!isWellFormedAccessToken(token)) throw rejected("The OAuth access token is malformed.");
    const row = await store.findToken(this.db, sha256Hex(token));
    if (!row || row.kind !== "access" || row.expires_at <= this.now()) throw rejected("The OAuth access token is unknown or expired.");
    const grant = await store.findGrant(this.db, row.grant_id);
    if (!grant || grant.revoked_at) throw rejected("The OAuth access token was revoked.");
    const rung = rungAt(audience, grant.scopes);
    if (!rung || !resourceFits(this.resources.resourceOf(audience), grant.resource, this.resources)) {
      throw new ProblemError("unauthenticated", {
        message:
          audience === "rest"
            ? "This OAuth token was not issued for the REST API: REST takes tokens with the scope checkouts.write."
            : "This OAuth token was not issued for /mcp: /mcp takes tokens with the scopes mcp.read or mcp.write.",
        help: { fix: "Authorize again with the scope (and resource) of the API you call." },
      });
    }
    return { grantId: grant.id, accountId: grant.account_id, clientId: grant.client_id, rung, expiresAt: row.expires_at };
  }

  private async clientOf(clientId: string): Promise<OAuthClientRow | undefined> {
    return isId("oauthClient", clientId) ? store.findClient(this.db, clientId) : undefined;
  }

  /**
   * RFC 6749 §2.3: a public client names itself; a confidential one proves its
   * secret (HTTP Basic or the body; the gateway refuses both at once). 401
   * `invalid_client` otherwise.
   */
  private async authenticateClient(input: { clientId?: string | undefined; clientSecret?: string | undefined }): Promise<OAuthClientRow> {
    const unknown = oauthError("invalid_client", "Client authentication failed: unknown client_id or wrong secret.");
    if (input.clientId === undefined) throw oauthError("invalid_client", "Name the client: client_id in the body, or HTTP Basic for a confidential client.");
    const client = await this.clientOf(input.clientId);
    if (!client) throw unknown;
    if (client.secret_hash === null) {
      if (input.clientSecret !== undefined)
        throw oauthError("invalid_client", "This client is public (token_endpoint_auth_method none): send client_id without a secret.");
      return client;
    }
    if (input.clientSecret === undefined || !secretMatches(input.clientSecret, client.secret_hash)) throw unknown;
    return client;
  }

  private async exchangeCode(client: OAuthClientRow, input: TokenRequest): Promise<IssuedTokens> {
    const invalid = (message: string) => oauthError("invalid_grant", message);
    if (input.code === undefined || !CODE.test(input.code)) throw invalid("The authorization code is missing or malformed.");
    const verifier = input.codeVerifier;
    if (verifier === undefined) throw oauthError("invalid_request", "code_verifier is required (PKCE).");
    const at = this.now();
    const codeHash = sha256Hex(input.code);
    // A replayed code revokes its grant: that must commit even though the request fails.
    const outcome = await this.db.transaction().execute(async (trx) => {
      const code = await store.lockCode(trx, codeHash);
      if (!code) return invalid("The authorization code is unknown or expired.");
      const grant = await store.lockGrant(trx, code.grant_id);
      if (!grant || grant.client_id !== client.id) return invalid("The authorization code was issued to another client.");
      if (code.spent_at !== null) {
        await this.revokeGrant(trx, grant, "code_reused");
        return invalid("The authorization code was already used; every token it gave is revoked.");
      }
      if (code.expires_at <= at) return invalid("The authorization code expired: authorize again.");
      if (grant.revoked_at) return invalid("The grant of this code was revoked.");
      if (input.redirectUri !== undefined && input.redirectUri !== code.redirect_uri) return invalid("redirect_uri differs from the authorization request's.");
      if (!pkceVerifies(verifier, code.code_challenge)) return invalid("code_verifier does not match the code_challenge (PKCE).");
      if (!resourceFits(input.resource, grant.resource, this.resources)) {
        return oauthError("invalid_target", "The resource differs from the one the user consented to.");
      }
      await store.spendCode(trx, codeHash, at);
      return this.issueTokens(trx, grant, at);
    });
    if (outcome instanceof ProblemError) throw outcome;
    return outcome;
  }

  private async refresh(client: OAuthClientRow, input: TokenRequest): Promise<IssuedTokens> {
    const invalid = (message: string) => oauthError("invalid_grant", message);
    if (input.refreshToken === undefined || !REFRESH_TOKEN.test(input.refreshToken)) throw invalid("The refresh token is missing or malformed.");
    const at = this.now();
    const hash = sha256Hex(input.refreshToken);
    const outcome = await this.db.transaction().execute(async (trx) => {
      const token = await store.lockToken(trx, hash);
      if (!token || token.kind !== "refresh") return invalid("The refresh token is unknown.");
      const grant = await store.lockGrant(trx, token.grant_id);
      if (!grant || grant.client_id !== client.id) return invalid("The refresh token was issued to another client.");
      if (grant.revoked_at) return invalid("The grant of this refresh token was revoked: authorize again.");
      if (token.spent_at !== null) {
        await this.revokeGrant(trx, grant, "refresh_token_reused");
        return invalid("The refresh token was already used; the whole grant is revoked. Authorize again.");
      }
      if (token.expires_at <= at) {
        await this.revokeGrant(trx, grant, "idle");
        return invalid("The connection was idle for six months: authorize again.");
      }
      if (!resourceFits(input.resource, grant.resource, this.resources)) {
        return oauthError("invalid_target", "The resource differs from the one the user consented to.");
      }
      if (input.scope !== undefined) {
        const outside = input.scope.split(" ").find((s) => s !== "" && s !== "offline_access" && !grant.scopes.includes(s));
        if (outside !== undefined) return oauthError("invalid_scope", `The grant does not include ${outside.slice(0, 40)}.`);
      }
      await store.spendToken(trx, hash, at);
      return this.issueTokens(trx, grant, at);
    });
    if (outcome instanceof ProblemError) throw outcome;
    return outcome;
  }

  private async issueTokens(trx: IdentityDb, grant: OAuthGrantRow, at: Date): Promise<IssuedTokens> {
    const accessToken = `oat_${randomBase62(32)}`;
    const refreshToken = `ort_${randomBase62(32)}`;
    await store.purgeExpired(trx, "oauth_tokens", at, PURGE_BATCH);
    const issued: [string, "access" | "refresh", number][] = [
      [accessToken, "access", ACCESS_TOKEN_TTL_SECONDS],
      [refreshToken, "refresh", REFRESH_IDLE_SECONDS],
    ];
    for (const [token, kind, ttlSeconds] of issued) {
      await store.insertToken(trx, {
        token_hash: sha256Hex(token),
        grant_id: grant.id,
        kind,
        created_at: at,
        expires_at: new Date(at.getTime() + ttlSeconds * 1000),
        spent_at: null,
      });
    }
    return { accessToken, refreshToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS, scope: grant.scopes.join(" ") };
  }

  /** Revokes the grant and records `oauth.revoked`, once (revoking a revoked grant records nothing). */
  private async revokeGrant(trx: IdentityDb, grant: OAuthGrantRow, because: RevokedBecause): Promise<void> {
    const at = this.now();
    if (!(await store.revokeGrant(trx, grant.id, at, because))) return;
    await recordActivity(trx, {
      accountId: grant.account_id,
      action: "oauth.revoked",
      objectId: grant.id,
      detail: { client_id: grant.client_id, because },
      actor: oauthActor(grant.client_id),
      testMode: false,
      at,
    });
  }
}
