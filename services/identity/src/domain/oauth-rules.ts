import { createHash, timingSafeEqual } from "node:crypto";
import { LOOPBACK_HOSTS } from "@c402/contracts";
import { ProblemError } from "@c402/problems";

/**
 * The rules of the OAuth 2.1 authorization server that need no database:
 * scopes and the resources they reach, redirect URIs, PKCE, and client
 * metadata (docs/adr/0012-oauth-server.md).
 */

/** REST integrations ask `checkouts.write`; MCP clients ask `mcp.read` and `mcp.write` (spec, Authentication 8). */
export const OAUTH_SCOPES = ["checkouts.write", "mcp.read", "mcp.write"] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/** Where a token is presented: the REST API, or `/mcp`. */
export type Audience = "rest" | "mcp";

const AUDIENCE_OF: Record<OAuthScope, Audience> = { "checkouts.write": "rest", "mcp.read": "mcp", "mcp.write": "mcp" };

/** Scope names that clients add by habit and this server grants implicitly: a refresh token always comes with the code. */
const IGNORED_SCOPES = new Set(["offline_access"]);

/** The OAuth error codes this server answers (RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 8707 §2). */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  | "invalid_target"
  | "access_denied"
  | "invalid_redirect_uri"
  | "invalid_client_metadata";

/**
 * An OAuth protocol error. It travels as a problem document whose extensions
 * carry the OAuth code; `redirect` says the authorization endpoint may send
 * it back to the client's redirect URI (the client and the URI were proven),
 * rather than showing it to the user.
 */
export function oauthError(code: OAuthErrorCode, description: string, opts: { redirect?: boolean } = {}): ProblemError {
  const slug = code === "invalid_client" ? "unauthenticated" : "bad-request";
  return new ProblemError(slug, {
    message: description,
    extensions: { oauth_error: code, ...(opts.redirect ? { oauth_redirect: true } : {}) },
  });
}

/** The resources this server issues tokens for: the REST API at the base URL, and `/mcp`. */
export class OAuthResources {
  readonly rest: string;
  readonly mcp: string;

  constructor(baseUrl: string) {
    this.rest = canonicalResource(baseUrl) ?? baseUrl;
    this.mcp = `${this.rest}/mcp`;
  }

  /** The audience a `resource` parameter names; undefined when it names none of ours. */
  audienceOf(resource: string): Audience | undefined {
    const canonical = canonicalResource(resource);
    if (canonical === this.mcp) return "mcp";
    if (canonical === this.rest || canonical === `${this.rest}/v1`) return "rest";
    return undefined;
  }

  resourceOf(audience: Audience): string {
    return audience === "mcp" ? this.mcp : this.rest;
  }
}

/** A resource URI as compared here: scheme and host lowercased (URL does that), no trailing slash; undefined when it is not an absolute URL without a fragment. */
function canonicalResource(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.hash !== "" || value.includes("#")) return undefined;
  const path = url.pathname.replace(/\/+$/, "");
  return `${url.protocol}//${url.host}${path}${url.search}`;
}

/**
 * The scopes and the resource an authorization request is granted. A
 * `resource` (RFC 8707) narrows the request to that resource's scopes; with
 * none, the scopes decide and the grant reaches every resource they name. A
 * request naming no scope gets all of its resource's scopes.
 */
export function grantedScopes(
  requested: string | undefined,
  resource: string | undefined,
  resources: OAuthResources,
  clientScope: string | null,
  opts: { redirect: boolean },
): { scopes: OAuthScope[]; resource: string } {
  const audience = resource === undefined ? undefined : resources.audienceOf(resource);
  if (resource !== undefined && audience === undefined) {
    throw oauthError("invalid_target", `The resource must be ${resources.mcp} (for /mcp) or ${resources.rest} (for the REST API).`, opts);
  }
  const names = (requested ?? "").split(" ").filter((s) => s !== "" && !IGNORED_SCOPES.has(s));
  const unknown = names.find((s) => !(OAUTH_SCOPES as readonly string[]).includes(s));
  if (unknown !== undefined) {
    throw oauthError("invalid_scope", `Unknown scope ${JSON.stringify(unknown.slice(0, 40))}: this server grants ${OAUTH_SCOPES.join(", ")}.`, opts);
  }
  let scopes = [...new Set(names as OAuthScope[])];
  if (clientScope !== null) {
    const allowed = new Set(clientScope.split(" "));
    const outside = scopes.find((s) => !allowed.has(s));
    if (outside) throw oauthError("invalid_scope", `The client registered scope "${clientScope.slice(0, 200)}", which does not include ${outside}.`, opts);
  }
  if (audience !== undefined) {
    if (scopes.length === 0) scopes = OAUTH_SCOPES.filter((s) => AUDIENCE_OF[s] === audience);
    const reaching = scopes.filter((s) => AUDIENCE_OF[s] === audience);
    if (reaching.length === 0) {
      throw oauthError(
        "invalid_scope",
        audience === "mcp" ? "The resource /mcp takes the scopes mcp.read and mcp.write." : "The REST API takes the scope checkouts.write.",
        opts,
      );
    }
    return { scopes: reaching, resource: resources.resourceOf(audience) };
  }
  if (scopes.length === 0) {
    throw oauthError("invalid_scope", "Name a scope: checkouts.write for the REST API, or mcp.read and mcp.write for /mcp.", opts);
  }
  const audiences = [...new Set(scopes.map((s) => AUDIENCE_OF[s]))];
  // One audience: the grant is bound to it. Both: the token reaches each with that audience's scopes only.
  return { scopes: scopes.sort(), resource: audiences.length === 1 && audiences[0] ? resources.resourceOf(audiences[0]) : "" };
}

/**
 * What a grant's scopes amount to where its token is presented: the REST API
 * takes `checkouts.write`, capped at the payments rung; `/mcp` takes
 * `mcp.write` as full and `mcp.read` as read_only. Undefined: the token does
 * not reach this audience (401).
 */
export function rungAt(audience: Audience, scopes: readonly string[]): "read_only" | "payments" | "full" | undefined {
  if (audience === "rest") return scopes.includes("checkouts.write") ? "payments" : undefined;
  if (scopes.includes("mcp.write")) return "full";
  return scopes.includes("mcp.read") ? "read_only" : undefined;
}

/** True when a request's `resource` names what the grant was issued for (a grant for both resources accepts either). */
export function resourceFits(resource: string | undefined, grantResource: string, resources: OAuthResources): boolean {
  if (resource === undefined) return true;
  const audience = resources.audienceOf(resource);
  if (audience === undefined) return false;
  return grantResource === "" || grantResource === resources.resourceOf(audience);
}

export const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;

/** Why a redirect URI cannot be registered (https, or http on a loopback host; absolute; no fragment), or undefined. */
export function redirectUriRefusal(value: string): string | undefined {
  if (value.length > MAX_URI_LENGTH) return `must be at most ${MAX_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute URL";
  }
  if (value.includes("#")) return "must not have a fragment";
  if (url.username !== "" || url.password !== "") return "must not carry credentials";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return "must be https, or http on a loopback host (127.0.0.1, [::1] or localhost)";
}

/**
 * RFC 9700 §2.1: exact string matching, except that the port of a loopback
 * redirect URI may differ (RFC 8252 §7.3: a native app listens on any port).
 * Host names are never equated (localhost is not 127.0.0.1).
 */
export function redirectUriMatches(requested: string, registered: string): boolean {
  if (requested === registered) return true;
  let a: URL;
  let b: URL;
  try {
    a = new URL(requested);
    b = new URL(registered);
  } catch {
    return false;
  }
  if (a.protocol !== "http:" || b.protocol !== "http:" || !LOOPBACK_HOSTS.has(a.hostname) || a.hostname !== b.hostname) return false;
  return a.pathname === b.pathname && a.search === b.search && !requested.includes("#") && a.username === "" && a.password === "";
}

const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

export function isPkceValue(value: string): boolean {
  return PKCE_VALUE.test(value);
}

/** RFC 7636 §4.6: BASE64URL(SHA256(verifier)) equals the challenge, compared in constant time. */
export function pkceVerifies(verifier: string, challenge: string): boolean {
  if (!isPkceValue(verifier)) return false;
  const computed = Buffer.from(createHash("sha256").update(verifier, "ascii").digest("base64url"));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

export type TokenEndpointAuthMethod = "none" | "client_secret_basic" | "client_secret_post";
const AUTH_METHODS: readonly string[] = ["none", "client_secret_basic", "client_secret_post"];

export interface ClientMetadataInput {
  clientName?: string | undefined;
  redirectUris: readonly string[];
  grantTypes: readonly string[];
  responseTypes: readonly string[];
  tokenEndpointAuthMethod?: string | undefined;
  applicationType?: string | undefined;
  scope?: string | undefined;
}

export interface ClientMetadata {
  name: string | null;
  redirectUris: string[];
  grantTypes: string[];
  responseTypes: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  applicationType: "web" | "native";
  scope: string | null;
}

/**
 * RFC 7591 §2 with this server's limits: at least one redirect URI, each
 * https or loopback; the code flow only (grant types authorization_code and
 * refresh_token, response type code); RFC 7591's default auth method is
 * client_secret_basic (a confidential client, given a secret). Errors are
 * `invalid_redirect_uri` and `invalid_client_metadata`.
 */
export function validateClientMetadata(input: ClientMetadataInput): ClientMetadata {
  if (input.redirectUris.length === 0) throw oauthError("invalid_redirect_uri", "redirect_uris must name at least one redirect URI.");
  if (input.redirectUris.length > MAX_REDIRECT_URIS) throw oauthError("invalid_redirect_uri", `redirect_uris may name at most ${MAX_REDIRECT_URIS} URIs.`);
  for (const uri of input.redirectUris) {
    const refusal = redirectUriRefusal(uri);
    if (refusal) throw oauthError("invalid_redirect_uri", `The redirect URI ${JSON.stringify(uri.slice(0, 100))} ${refusal}.`);
  }
  const name = input.clientName?.trim();
  if (name !== undefined && (name.length > 200 || /\p{Cc}/u.test(name))) {
    throw oauthError("invalid_client_metadata", "client_name must be at most 200 characters, without control characters.");
  }
  const grantTypes = input.grantTypes.length > 0 ? [...new Set(input.grantTypes)] : ["authorization_code"];
  const badGrant = grantTypes.find((g) => g !== "authorization_code" && g !== "refresh_token");
  if (badGrant !== undefined)
    throw oauthError(
      "invalid_client_metadata",
      `grant_types may hold authorization_code and refresh_token only, not ${JSON.stringify(badGrant.slice(0, 60))}.`,
    );
  if (!grantTypes.includes("authorization_code")) throw oauthError("invalid_client_metadata", "grant_types must include authorization_code.");
  const responseTypes = input.responseTypes.length > 0 ? [...new Set(input.responseTypes)] : ["code"];
  if (responseTypes.some((r) => r !== "code")) throw oauthError("invalid_client_metadata", "response_types may hold code only.");
  const method = input.tokenEndpointAuthMethod ?? "client_secret_basic";
  if (!AUTH_METHODS.includes(method)) {
    throw oauthError("invalid_client_metadata", `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(", ")}.`);
  }
  const applicationType = input.applicationType ?? "web";
  if (applicationType !== "web" && applicationType !== "native") throw oauthError("invalid_client_metadata", "application_type must be web or native.");
  let scope: string | null = null;
  if (input.scope !== undefined && input.scope.trim() !== "") {
    const names = [...new Set(input.scope.split(" ").filter((s) => s !== "" && !IGNORED_SCOPES.has(s)))];
    const unknown = names.find((s) => !(OAUTH_SCOPES as readonly string[]).includes(s));
    if (unknown !== undefined)
      throw oauthError("invalid_client_metadata", `Unknown scope ${JSON.stringify(unknown.slice(0, 40))}: this server grants ${OAUTH_SCOPES.join(", ")}.`);
    scope = names.length > 0 ? names.join(" ") : null;
  }
  return {
    name: name === undefined || name === "" ? null : name,
    redirectUris: [...input.redirectUris],
    grantTypes,
    responseTypes,
    tokenEndpointAuthMethod: method as TokenEndpointAuthMethod,
    applicationType,
    scope,
  };
}
