import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { identityV1 } from "@c402/contracts";
import type { ServiceImplementation } from "@c402/rpc";
import type { OAuthServer } from "../domain/oauth";
import type { OAuthClientRow } from "../store/oauth-store";

/** The RPCs of the OAuth authorization server; identity-rpc.ts serves the rest of IdentityService. */
export type OAuthMethods = Pick<
  ServiceImplementation<typeof identityV1.IdentityService>,
  "registerOAuthClient" | "startOAuthAuthorization" | "decideOAuthConsent" | "exchangeOAuthToken" | "revokeOAuthToken"
>;

function clientMessage(c: OAuthClientRow): identityV1.OAuthClient {
  return {
    $typeName: "identity.v1.OAuthClient",
    clientId: c.id,
    ...(c.name !== null ? { clientName: c.name } : {}),
    redirectUris: c.redirect_uris,
    grantTypes: c.grant_types,
    responseTypes: c.response_types,
    tokenEndpointAuthMethod: c.token_endpoint_auth_method,
    applicationType: c.application_type,
    ...(c.scope !== null ? { scope: c.scope } : {}),
    createdAt: timestampFromDate(c.created_at),
  };
}

export function oauthRpc(oauth: OAuthServer): OAuthMethods {
  return {
    async registerOAuthClient(req) {
      const r = await oauth.register({
        clientName: req.clientName,
        redirectUris: req.redirectUris,
        grantTypes: req.grantTypes,
        responseTypes: req.responseTypes,
        tokenEndpointAuthMethod: req.tokenEndpointAuthMethod,
        applicationType: req.applicationType,
        scope: req.scope,
      });
      return { client: clientMessage(r.client), ...(r.secret !== undefined ? { clientSecret: r.secret } : {}) };
    },
    async startOAuthAuthorization(req) {
      const r = await oauth.authorize({
        clientId: req.clientId,
        redirectUri: req.redirectUri,
        responseType: req.responseType,
        scope: req.scope,
        resource: req.resource,
        codeChallenge: req.codeChallenge,
        codeChallengeMethod: req.codeChallengeMethod,
        state: req.state,
        signedIn: req.signedIn ? { accountId: req.signedIn.accountId, sessionId: req.signedIn.sessionId } : undefined,
      });
      return {
        client: clientMessage(r.client),
        scopes: r.scopes,
        resource: r.resource,
        ...(r.requestId !== undefined ? { requestId: r.requestId } : {}),
        ...(r.csrfToken !== undefined ? { csrfToken: r.csrfToken } : {}),
        ...(r.expiresAt ? { expiresAt: timestampFromDate(r.expiresAt) } : {}),
      };
    },
    async decideOAuthConsent(req) {
      const r = await oauth.decide({
        requestId: req.requestId,
        csrfToken: req.csrfToken,
        accountId: req.signedIn?.accountId ?? "",
        sessionId: req.signedIn?.sessionId ?? "",
        allow: req.allow,
      });
      return {
        redirectUri: r.redirectUri,
        ...(r.state !== null ? { state: r.state } : {}),
        ...(r.code !== undefined ? { code: r.code } : {}),
        ...(r.error ? { error: r.error.code, errorDescription: r.error.description } : {}),
      };
    },
    async exchangeOAuthToken(req) {
      const t = await oauth.token({
        grantType: req.grantType,
        code: req.code,
        codeVerifier: req.codeVerifier,
        redirectUri: req.redirectUri,
        refreshToken: req.refreshToken,
        resource: req.resource,
        scope: req.scope,
        clientId: req.clientId,
        clientSecret: req.clientSecret,
      });
      return { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresIn: t.expiresIn, scope: t.scope };
    },
    async revokeOAuthToken(req) {
      await oauth.revoke({ token: req.token, clientId: req.clientId, clientSecret: req.clientSecret });
      return {};
    },
  };
}
