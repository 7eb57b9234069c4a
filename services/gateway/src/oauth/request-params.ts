import { oauthFailure } from "./oauth-errors";

/** An OAuth request's parameters by name (an empty one counts as absent). */
export type OAuthParams = Record<string, string | undefined>;

/** The parameters of a query or a form, each once (RFC 6749 §3.1: a repeated parameter is an invalid request). */
export function singleParams(source: unknown, names: readonly string[]): OAuthParams {
  const bag = (source ?? {}) as Record<string, unknown>;
  const out: OAuthParams = {};
  for (const name of names) {
    const value = bag[name];
    if (value === undefined) continue;
    if (typeof value !== "string") throw oauthFailure("invalid_request", `The parameter ${name} must be sent once.`);
    if (value !== "") out[name] = value;
  }
  return out;
}

/** A protocol parameter's field name in the identity RPCs (`code_verifier` → `codeVerifier`). */
export const rpcFieldOf = (name: string): string => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Each of `names` that was sent, under its RPC field name. */
export function presentParams(params: OAuthParams, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = params[name];
    if (value !== undefined) out[rpcFieldOf(name)] = value;
  }
  return out;
}

/**
 * RFC 6749 §2.3.1: HTTP Basic (each part form-urlencoded) or the body's
 * client_id/client_secret, never both ways at once. `authorization` is the
 * request's Authorization header.
 */
export function clientCredentials(authorization: string | undefined, params: OAuthParams): { clientId?: string; clientSecret?: string } {
  if (authorization === undefined) {
    return {
      ...(params.client_id !== undefined ? { clientId: params.client_id } : {}),
      ...(params.client_secret !== undefined ? { clientSecret: params.client_secret } : {}),
    };
  }
  const basic = /^basic[ \t]+([A-Za-z0-9+/=]{1,2048})[ \t]*$/i.exec(authorization);
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
