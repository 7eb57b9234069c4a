import { credentialKindName, identityV1, scopeName, type CredentialKindName, type KeyModeName, type ScopeName } from "@c402/contracts";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ProblemError } from "@c402/problems";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { ServiceClients } from "./deps";
import type { AuthAttempt, AuthFailureLimit } from "./rate-limit";
import { isSessionToken, sessionCookieOf, sessionCookiesOf } from "./session-cookie";

const RANK: Record<ScopeName, number> = { read_only: 1, payments: 2, full: 3 };

export interface Credential {
  kind: CredentialKindName;
  accountId: string;
  /** The key's id, or the session's. */
  keyId: string;
  keyPrefix: string;
  scope: ScopeName;
  /** A session is `test` here: checkouts it creates default to rehearsal, as a test key's do. */
  mode: KeyModeName;
  /** How account events name this credential (`key:<prefix>`, `wallet`, `session`), as identity resolved it. */
  actor: string;
  /** Where the secret came from: the Authorization header, or the session cookie. */
  via: "bearer" | "cookie";
  /** When a session ends (keys do not expire). */
  expiresAt?: Date;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      credential?: Credential;
    }
    interface Locals {
      /** Installed on the app (app.locals) by createGatewayApp; requireScope needs it. */
      authFailures?: AuthFailureLimit;
    }
  }
}

/** RFC 9110: the scheme is case-insensitive; spaces separate it from the token (a tab is tolerated too). */
const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;
/** The listed prefix of a key (`sk_test_abcd`): failures are also counted per prefix. */
const KEY_PREFIX = /^sk_(?:test|live)_[0-9A-Za-z]{4}/;

export function credentialOf(req: Request): Credential {
  if (!req.credential) throw new ProblemError("unauthenticated", "Authentication is required.");
  return req.credential;
}

function authFailuresOf(req: Request): AuthFailureLimit {
  const limit = req.app.locals.authFailures;
  if (!limit) throw new Error("the auth failure limit is not installed on this app (app.locals.authFailures)");
  return limit;
}

/**
 * Seller authentication: `Authorization: Bearer <API_KEY or session token>`,
 * or the browser's session cookie (see authenticate), resolved by identity on every request (a revoked key stops at once). A
 * client address with too many recent failures gets 429 before anything is
 * resolved, and a key prefix with too many gets 429 for a credential that
 * does not resolve (the real key still works); every 401 here counts. 401 for a
 * missing, malformed, unknown, revoked or expired credential (the error
 * handler adds WWW-Authenticate); 403 naming the scope the route needs.
 */
export function requireScope(clients: ServiceClients, needed: ScopeName): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const cred = await authenticate(clients, req, res);
    req.credential = cred;
    ensureScope(cred, needed);
    next();
  };
}

/** True when the credential's rung reaches `needed`. */
export function scopeCovers(cred: Credential, needed: ScopeName): boolean {
  return RANK[cred.scope] >= RANK[needed];
}

/** 403 naming the scope needed when the credential's is below it (REST routes and MCP tools alike). */
export function ensureScope(cred: Credential, needed: ScopeName): void {
  if (cred.kind === "oauth" && !scopeCovers(cred, needed)) {
    throw new ProblemError("forbidden", {
      message: `This endpoint needs scope \`${needed}\`; an OAuth token reaches \`${cred.scope}\` here (checkouts.write is capped at the payments rung: wallets and keys are for the account's own keys and sessions).`,
      help: { fix: "Use an API key with that scope, or sign in to the dashboard.", retry_is_safe: false, needed_scope: needed },
      extensions: { needed_scope: needed },
    });
  }
  if (!scopeCovers(cred, needed)) {
    throw new ProblemError("forbidden", {
      message: `This endpoint needs a key with scope \`${needed}\`; this key has \`${cred.scope}\`.`,
      help: { fix: `Create a key with scope ${needed} (POST /v1/keys with a full key) and use it here.`, retry_is_safe: false, needed_scope: needed },
      extensions: { needed_scope: needed },
    });
  }
}

/** The bearer token of the Authorization header, when it has the Bearer form. */
export function bearerTokenOf(req: Request): string | undefined {
  const header = req.get("authorization");
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

/** 403 for an OAuth token on a route that manages the account's own credentials (spec, Errors: `forbidden`). */
export function refuseOAuth(cred: Credential, what: string): void {
  if (cred.kind !== "oauth") return;
  throw new ProblemError("forbidden", {
    message: `An OAuth token cannot manage ${what}: it acts for one application, at the payments rung at most.`,
    help: { fix: "Use an API key with scope full, or sign in to the dashboard.", retry_is_safe: false },
    extensions: { reason: "oauth_token_refused" },
  });
}

/** Where a credential is presented: an OAuth token reaches only the audience its scopes name. */
export type Audience = "rest" | "mcp";

/**
 * The secret a request authenticates with: the Authorization header, which
 * wins whenever it is present, else the session cookie. A request the cookie
 * authenticates is a browser's: a write must come from this site (CSRF),
 * checked before anything is resolved, and only a session token counts.
 * `doors.cookie` false: the header alone (/mcp takes no cookie). `doors.audience`
 * is where the secret is presented (default the REST API): an OAuth token
 * that does not reach it is a 401.
 */
export async function authenticate(
  clients: ServiceClients,
  req: Request,
  res: Response,
  doors: { cookie: boolean; audience?: Audience } = { cookie: true },
): Promise<Credential> {
  const header = req.get("authorization");
  const cookie = header === undefined && doors.cookie ? sessionCookieOf(req) : undefined;
  if (cookie !== undefined) sessionCookiesOf(req).refuseCrossSite(req);
  const token = header === undefined ? cookie : BEARER.exec(header)?.[1];
  const attempt: AuthAttempt = {
    ip: req.ip ?? "unknown",
    keyPrefix: header === undefined ? undefined : token?.match(KEY_PREFIX)?.[0],
    read: req.method === "GET" || req.method === "HEAD",
  };
  const failures = authFailuresOf(req);
  await failures.refuseIfOver(attempt, res, "address");
  if (header === undefined && cookie === undefined) {
    throw new ProblemError("unauthenticated", { message: "Send an API key as `Authorization: Bearer <API_KEY>`." });
  }
  try {
    if (token === undefined) throw new ProblemError("unauthenticated", "The Authorization header must be `Bearer <API_KEY>`.");
    if (cookie !== undefined && !isSessionToken(cookie)) throw new ProblemError("unauthenticated", "The session cookie does not hold a session.");
    const audience = doors.audience === "mcp" ? identityV1.Audience.MCP : identityV1.Audience.REST;
    const resolved = await clients.identity.resolveCredential({ secret: token, audience });
    const scope = scopeName(resolved.scope);
    const kind = credentialKindName(resolved.kind);
    if (!scope || !kind) throw new ProblemError("unauthenticated", "The credential has no usable scope.");
    return {
      kind,
      accountId: resolved.accountId,
      keyId: resolved.keyId,
      keyPrefix: resolved.keyPrefix,
      scope,
      mode: resolved.mode === identityV1.KeyMode.LIVE ? "live" : "test",
      actor: resolved.actor,
      via: cookie !== undefined ? "cookie" : "bearer",
      ...(resolved.expiresAt ? { expiresAt: timestampDate(resolved.expiresAt) } : {}),
    };
  } catch (err) {
    if (err instanceof ProblemError && err.slug === "unauthenticated") {
      try {
        await failures.refuseIfOver(attempt, res, "prefix");
      } finally {
        await failures.recordFailure(attempt);
      }
    }
    throw err;
  }
}
