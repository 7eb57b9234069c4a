import { ProblemError } from "@c402/problems";

/**
 * OAuth protocol errors travel as problems whose extensions carry
 * `oauth_error` (identity throws them so too); the token, registration and
 * revocation endpoints write them as RFC 6749 §5.2 and RFC 7591 §3.2.2 do.
 */
export function oauthFailure(code: string, description: string, status = 400): ProblemError {
  return new ProblemError(status === 401 ? "unauthenticated" : "bad-request", { message: description, extensions: { oauth_error: code } });
}

export const oauthCodeOf = (err: unknown): string | undefined =>
  err instanceof ProblemError && typeof err.extensions?.oauth_error === "string" ? err.extensions.oauth_error : undefined;

/** An OAuth error body (`{error, error_description}`) with its status. */
export interface OAuthErrorAnswer {
  status: 400 | 401;
  body: { error: string; error_description: string };
}

/**
 * A failure of /oauth/register, /oauth/token or /oauth/revoke as the OAuth
 * error it is, or undefined: not one (the problem documents answer it). A body
 * that does not parse or validate is the endpoint's own kind of invalid request.
 */
export function oauthErrorOf(err: unknown, endpoint: string): OAuthErrorAnswer | undefined {
  let code = oauthCodeOf(err);
  const type = (err as { type?: unknown } | null)?.type;
  if (code === undefined && (type === "entity.parse.failed" || (err instanceof ProblemError && err.slug === "invalid-request"))) {
    code = endpoint === "/oauth/register" ? "invalid_client_metadata" : "invalid_request";
  }
  if (code === undefined) return undefined;
  const description = err instanceof ProblemError ? err.message : "The request body is not valid.";
  return { status: code === "invalid_client" ? 401 : 400, body: { error: code, error_description: description } };
}
