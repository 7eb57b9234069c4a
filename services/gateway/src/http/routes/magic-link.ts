import { createHash } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { identityV1 } from "@c402/contracts";
import { invalid, ProblemError } from "@c402/problems";
import { Router, type Request, type Response } from "express";
import { magicLinkRequestedView, sessionCookieView, signedInByLinkView } from "../../views/magic-link";
import { bearerTokenOf, credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { countAgainst, rateLimit } from "../rate-limit";
import { noStore } from "../request-context";
import { sessionCookieOf, sessionCookiesOf } from "../session-cookie";
import { validateBody } from "../validate";

/**
 * Magic-link sign-in and the browser session cookie:
 *
 *   POST /auth/magic-link/request   {email, return_to?}: mails a single-use link (same answer for every address)
 *   POST /auth/verify               {token}: consumes the link; the session (token shown once) and its cookie
 *   GET  /auth/verify?token=        the link itself: consumes it, sets the cookie, 303 to return_to or /auth/me
 *   POST /auth/session/cookie       a session's bearer token -> the cookie of that same session (a key: 403)
 */

/**
 * Sign-in links per address: fixed 15-minute windows in the shared cache,
 * counted on a hash of the trimmed, lowercased address (the cache never holds
 * the address). Per client address, every sign-in route shares the
 * AUTH_RATE_LIMIT_PER_MINUTE limit the wallet sign-in has.
 */
export const MAGIC_LINK_LIMITS = { windowSeconds: 900, perAddress: 5 } as const;

/** Where a browser lands after signing in when the link named nowhere: the profile it signed in to. */
const DEFAULT_LANDING = "/auth/me";

const addressKey = (email: string) => createHash("sha256").update(email.trim().toLowerCase()).digest("hex");

function tokenOfQuery(req: Request): string {
  const token = req.query.token;
  if (typeof token !== "string" || token.length === 0) throw invalid([{ field: "token", reason: "is required, once, as a query parameter" }]);
  if (token.length > 256) throw invalid([{ field: "token", reason: "must be at most 256 characters" }]);
  return token;
}

/** Per client address, the magic-link routes and the dashboard's sign-in form share one limit a minute (AUTH_RATE_LIMIT_PER_MINUTE). */
export function signInsPerClient({ cache, settings }: Pick<GatewayDeps, "cache" | "settings">) {
  return rateLimit(cache, { name: "sign-in", limit: settings.authRateLimitPerMinute, windowSeconds: 60 });
}

/**
 * Mails a sign-in link to `email` (landing on `returnTo` once followed),
 * counted against the address's limit: the JSON route and the dashboard's
 * sign-in form share it.
 */
export async function requestSignInLink(
  { clients, cache }: Pick<GatewayDeps, "clients" | "cache">,
  res: Response,
  email: string,
  returnTo: string | undefined,
): Promise<identityV1.RequestMagicLinkResponse> {
  await countAgainst(
    cache,
    res,
    { name: "magic-link-address", limit: MAGIC_LINK_LIMITS.perAddress, windowSeconds: MAGIC_LINK_LIMITS.windowSeconds },
    addressKey(email),
  );
  return clients.identity.requestMagicLink({ email, ...(returnTo !== undefined ? { returnTo } : {}) });
}

export function magicLinkRoutes({ clients, cache, settings }: GatewayDeps): Router {
  const router = Router();
  const perClient = signInsPerClient({ cache, settings });

  router.post("/auth/magic-link/request", perClient, async (req, res) => {
    const body = validateBody("MagicLinkRequest", req.body);
    const returnTo = typeof body.return_to === "string" ? body.return_to : undefined;
    res.json(magicLinkRequestedView(await requestSignInLink({ clients, cache }, res, body.email, returnTo)));
  });

  /** Signs in by the link's token: the session is set as the cookie, and answered for the caller that holds a bearer token. */
  const signIn = async (req: Request, res: Response, token: string): Promise<identityV1.VerifyMagicLinkResponse> => {
    const r = await clients.identity.verifyMagicLink({ token });
    if (!r.session?.expiresAt) throw new Error("identity answered a sign-in without its session");
    sessionCookiesOf(req).set(res, r.session.token, timestampDate(r.session.expiresAt));
    return r;
  };

  router.post("/auth/verify", perClient, noStore, async (req, res) => {
    const body = validateBody("MagicLinkVerify", req.body);
    res.json(signedInByLinkView(await signIn(req, res, body.token)));
  });

  // The link in the mail: a browser follows it, so the answer is the cookie and a redirect (303: the next request is a GET).
  router.get("/auth/verify", perClient, noStore, async (req, res) => {
    const r = await signIn(req, res, tokenOfQuery(req));
    // The address carried the token: the page it leads to must not pass it on as a Referer.
    res.setHeader("Referrer-Policy", "no-referrer");
    res.redirect(303, sessionCookiesOf(req).landing(r.returnTo, DEFAULT_LANDING));
  });

  router.post("/auth/session/cookie", requireScope(clients, "read_only"), noStore, async (req, res) => {
    const credential = credentialOf(req);
    if (credential.kind !== "session") {
      throw new ProblemError("forbidden", {
        message: "The session cookie is for sessions; an automation key cannot be turned into one.",
        help: { fix: "Use the key as Authorization: Bearer <key>, or sign in (magic link or wallet) and send the session's token here.", retry_is_safe: false },
        extensions: { reason: "key_cannot_mint_session_cookie" },
      });
    }
    const token = credential.via === "cookie" ? sessionCookieOf(req) : bearerTokenOf(req);
    if (token === undefined || !credential.expiresAt) throw new Error("a resolved session without its token or its end");
    sessionCookiesOf(req).set(res, token, credential.expiresAt);
    res.json(sessionCookieView(credential.expiresAt));
  });

  return router;
}
