import { ProblemError } from "@c402/problems";
import type { Request, Response } from "express";

/**
 * The browser session cookie (docs/decisions.md, Session cookie). Its value is
 * the session's token itself (`sess_…`, the bearer token the dashboard holds),
 * so a cookie and its bearer token are one session: logging out ends both.
 * HttpOnly, SameSite=Lax, Path=/, and Secure unless the service's base URL is
 * plain http on a loopback host (a local run, where a Secure cookie would
 * never come back). It lives as long as its session.
 */
export const SESSION_COOKIE = "c402_session";

const SESSION_TOKEN = /^sess_[0-9A-Za-z]{32}$/;
/** Methods a cookie may authenticate without the cross-site check: they change nothing. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
/** Sec-Fetch-Site values of a request the site itself made, or the user typed (RFC: Fetch Metadata). */
const SAME_SITE_FETCH = new Set(["same-origin", "none"]);
const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** Installed on the app (app.locals) by createGatewayApp; cookie authentication needs it. */
      sessionCookies?: SessionCookies;
    }
  }
}

/** The value of the session cookie the request carries, as sent (undefined when there is none). */
export function sessionCookieOf(req: Request): string | undefined {
  const header = req.get("cookie");
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function isSessionToken(value: string): boolean {
  return SESSION_TOKEN.test(value);
}

export function sessionCookiesOf(req: Request): SessionCookies {
  const cookies = req.app.locals.sessionCookies;
  if (!cookies) throw new Error("the session cookies are not installed on this app (app.locals.sessionCookies)");
  return cookies;
}

export class SessionCookies {
  private readonly origin: string;
  private readonly secure: boolean;

  constructor(baseUrl: string) {
    const url = new URL(baseUrl);
    this.origin = url.origin;
    this.secure = !(url.protocol === "http:" && LOOPBACK_HOST.test(url.hostname));
  }

  private attributes(): string {
    return `Path=/; HttpOnly; SameSite=Lax${this.secure ? "; Secure" : ""}`;
  }

  /** Sets the cookie to the session's token, for as long as the session lives. */
  set(res: Response, token: string, expiresAt: Date): void {
    const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
    res.append("Set-Cookie", `${SESSION_COOKIE}=${token}; Max-Age=${maxAge}; Expires=${expiresAt.toUTCString()}; ${this.attributes()}`);
  }

  /** Tells the browser to drop the cookie. */
  clear(res: Response): void {
    res.append("Set-Cookie", `${SESSION_COOKIE}=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; ${this.attributes()}`);
  }

  /**
   * CSRF protection of a request the cookie authenticates: a write (any method
   * but GET, HEAD, OPTIONS) must come from this site. Browsers say so in
   * Sec-Fetch-Site (`same-origin`, or `none` for one the user made); one that
   * does not send it sends Origin on every write, which must be this service's.
   * A write with neither is refused too: every browser sends one of them, and
   * a client that is not a browser has the bearer token to use instead.
   */
  refuseCrossSite(req: Request): void {
    if (SAFE_METHODS.has(req.method)) return;
    const site = req.get("sec-fetch-site");
    if (site !== undefined ? SAME_SITE_FETCH.has(site.trim().toLowerCase()) : req.get("origin") === this.origin) return;
    throw new ProblemError("forbidden", {
      message: "A change authenticated by the session cookie must come from this site's own pages.",
      help: {
        fix: `Send it from a page of ${this.origin} (the browser then says Sec-Fetch-Site: same-origin), or authenticate with Authorization: Bearer <session token or key> instead of the cookie.`,
        retry_is_safe: false,
      },
      extensions: { reason: "cross_site_cookie_request" },
    });
  }

  /**
   * Where to send a browser after signing in: `returnTo` when it resolves to a
   * path of this very origin (identity refused anything else when the link
   * was asked for; checked again here, as the last step before a Location
   * header), otherwise `fallback`.
   */
  landing(returnTo: string | undefined, fallback: string): string {
    if (returnTo === undefined || !returnTo.startsWith("/") || returnTo.startsWith("//") || /[\\\s\p{Cc}]/u.test(returnTo)) return fallback;
    try {
      const url = new URL(returnTo, this.origin);
      return url.origin === this.origin ? `${url.pathname}${url.search}${url.hash}` : fallback;
    } catch {
      return fallback;
    }
  }
}
