import type { GatewayDeps } from "../http/deps";
import { oauthFailure } from "./oauth-errors";
import { clientCredentials, presentParams, singleParams } from "./request-params";

const TOKEN_PARAMS = ["grant_type", "code", "code_verifier", "redirect_uri", "refresh_token", "resource", "scope", "client_id", "client_secret"] as const;
/** What each grant may carry besides the client's credentials; identity decides which the grant type needs. */
const GRANT_PARAMS = ["code", "code_verifier", "redirect_uri", "refresh_token", "resource", "scope"] as const;

/**
 * POST /oauth/token: authorization_code (PKCE S256) and refresh_token
 * (rotating), from the form and the client's credentials (`authorization`:
 * the request's Authorization header). Identity checks the grant.
 */
export async function exchangeOAuthToken({ clients }: Pick<GatewayDeps, "clients">, form: unknown, authorization: string | undefined) {
  const params = singleParams(form, TOKEN_PARAMS);
  if (params.grant_type === undefined) throw oauthFailure("invalid_request", "grant_type is required.");
  const client = clientCredentials(authorization, params);
  const t = await clients.identity.exchangeOAuthToken({ grantType: params.grant_type, ...presentParams(params, GRANT_PARAMS), ...client });
  return { access_token: t.accessToken, token_type: "Bearer", expires_in: t.expiresIn, refresh_token: t.refreshToken, scope: t.scope };
}

/** POST /oauth/revoke (RFC 7009): the token revoked, whichever kind it is. */
export async function revokeOAuthToken({ clients }: Pick<GatewayDeps, "clients">, form: unknown, authorization: string | undefined): Promise<void> {
  const params = singleParams(form, ["token", "token_type_hint", "client_id", "client_secret"]);
  if (params.token === undefined) throw oauthFailure("invalid_request", "token is required.");
  await clients.identity.revokeOAuthToken({ token: params.token, ...clientCredentials(authorization, params) });
}
