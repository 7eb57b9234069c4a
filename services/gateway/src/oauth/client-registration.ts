import { identityV1 } from "@c402/contracts";
import { answered } from "@c402/rpc";
import type { GatewayDeps } from "../http/deps";
import { oauthFailure } from "./oauth-errors";
import { rpcFieldOf } from "./request-params";

/** POST /oauth/register (RFC 7591): the client registered, answered as its metadata (with its secret, shown this once, for a confidential client). */
export async function registerOAuthClient({ clients }: Pick<GatewayDeps, "clients">, body: unknown) {
  const r = await clients.identity.registerOAuthClient(registrationOf(body));
  const c = answered(r.client, "client");
  return {
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
  };
}

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
    return v === undefined ? {} : { [rpcFieldOf(name)]: v };
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
