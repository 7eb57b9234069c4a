import { identityV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { ServiceClients } from "./deps";

export type Scope = "read_only" | "payments" | "full";

const RANK: Record<Scope, number> = { read_only: 1, payments: 2, full: 3 };
const SCOPE_OF: Partial<Record<identityV1.Scope, Scope>> = {
  [identityV1.Scope.READ_ONLY]: "read_only",
  [identityV1.Scope.PAYMENTS]: "payments",
  [identityV1.Scope.FULL]: "full",
};

export interface Credential {
  accountId: string;
  keyId: string;
  keyPrefix: string;
  scope: Scope;
  mode: "test" | "live";
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      credential?: Credential;
    }
  }
}

const BEARER = /^Bearer ([^\s]+)$/;

export function credentialOf(req: Request): Credential {
  if (!req.credential) throw new ProblemError("unauthenticated", "Authentication is required.");
  return req.credential;
}

/**
 * Seller authentication: `Authorization: Bearer <API_KEY>` resolved by
 * identity on every request (a revoked key stops at once). 401 for a missing,
 * malformed, unknown or revoked key; 403 naming the scope the route needs.
 */
export function requireScope(clients: ServiceClients, needed: Scope): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const header = req.get("authorization");
    if (!header) throw new ProblemError("unauthenticated", { message: "Send an API key as `Authorization: Bearer <API_KEY>`." });
    const m = BEARER.exec(header);
    if (!m) throw new ProblemError("unauthenticated", "The Authorization header must be `Bearer <API_KEY>`.");
    const resolved = await clients.identity.resolveCredential({ secret: m[1] as string });
    const scope = SCOPE_OF[resolved.scope];
    if (!scope) throw new ProblemError("unauthenticated", "The key has no usable scope.");
    req.credential = {
      accountId: resolved.accountId,
      keyId: resolved.keyId,
      keyPrefix: resolved.keyPrefix,
      scope,
      mode: resolved.mode === identityV1.KeyMode.LIVE ? "live" : "test",
    };
    if (RANK[scope] < RANK[needed]) {
      throw new ProblemError("forbidden", {
        message: `This endpoint needs a key with scope \`${needed}\`; this key has \`${scope}\`.`,
        help: { fix: `Create a key with scope ${needed} (POST /v1/keys with a full key) and use it here.`, retry_is_safe: false, needed_scope: needed },
        extensions: { needed_scope: needed },
      });
    }
    next();
  };
}
