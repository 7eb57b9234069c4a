import type { Cache, CountOptions, Limiter, LimiterOptions } from "@c402/cache";
import { ProblemError } from "@c402/problems";
import type { NextFunction, Request, RequestHandler, Response } from "express";

/** Counting fails closed: when the cache cannot count, the request is refused with 503 rather than let through unmetered. */
async function counted<T>(count: () => Promise<T>): Promise<T> {
  try {
    return await count();
  } catch {
    throw new ProblemError("unavailable", {
      message: "Rate limiting is unavailable, so this endpoint is closed for the moment.",
      help: { retry_is_safe: true, fix: "Retry shortly." },
    });
  }
}

/** A fixed-window limit: `limit` requests per key in `windowSeconds`, counted under `name`. */
export type LimitWindow = LimiterOptions;

/** The X-RateLimit-* headers of a budget: its size, what is left of it, and when it starts afresh. */
export function setRateLimitHeaders(res: Response, budget: { limit: number; remaining: number; resetSeconds: number }): void {
  res.setHeader("X-RateLimit-Limit", String(budget.limit));
  res.setHeader("X-RateLimit-Remaining", String(Math.max(0, budget.remaining)));
  res.setHeader("X-RateLimit-Reset", String(budget.resetSeconds));
}

/**
 * Spends one request of `key`'s budget in `limiter` (shared across gateway
 * replicas through the cache), sets the X-RateLimit-* headers, and throws 429
 * with Retry-After once the window is over its limit. It fails closed (503
 * when the cache cannot count). Every rate limit of the gateway goes through
 * here: obtain the limiter once (`cache.limiter(...)`) and spend per request.
 */
export async function spendFrom(limiter: Limiter, res: Response, key: string): Promise<void> {
  const state = await counted(() => limiter.consume(key));
  setRateLimitHeaders(res, { limit: limiter.limit, remaining: state.remaining, resetSeconds: state.resetSeconds });
  if (!state.allowed) {
    res.setHeader("Retry-After", String(state.resetSeconds));
    throw new ProblemError("rate-limited", {
      message: `More than ${limiter.limit} requests in ${limiter.windowSeconds} seconds.`,
      help: { fix: `Retry after ${state.resetSeconds} seconds.`, retry_is_safe: true },
    });
  }
}

/** spendFrom with the cache's limiter for `limit` (the cache keeps one per name). */
export function countAgainst(cache: Cache, res: Response, limit: LimitWindow, key: string): Promise<void> {
  return spendFrom(cache.limiter(limit), res, key);
}

/**
 * spendFrom as a route's middleware: per client address, or per whatever
 * `keyOf` names (e.g. a payer; a request it names nothing for is not counted).
 */
export function rateLimit(cache: Cache, opts: LimitWindow & { keyOf?: (req: Request) => string | undefined }): RequestHandler {
  const limiter = cache.limiter({ name: opts.name, limit: opts.limit, windowSeconds: opts.windowSeconds });
  return async (req: Request, res: Response, next: NextFunction) => {
    const key = opts.keyOf ? opts.keyOf(req) : (req.ip ?? "unknown");
    if (key !== undefined) await spendFrom(limiter, res, key);
    next();
  };
}

/** Who a failed authentication is counted against: the client address, and the key prefix when the token looks like a key. */
export interface AuthAttempt {
  ip: string;
  keyPrefix?: string | undefined;
  /** A request that changes nothing (GET, HEAD): while the cache cannot count, it is counted in this process instead of refused. */
  read: boolean;
}

/**
 * Failed authentications, counted per client address and per key prefix in
 * fixed windows shared through the cache. Only failures count. Once an
 * address has failed `limit` times in a window, every authenticated request
 * from it is refused with 429 until the window ends, before its credential is
 * resolved. Once a prefix has, a credential with it that does not resolve is
 * answered 429 instead of 401, so guessing keys gains nothing; the genuine
 * key keeps working, or anyone who saw its prefix could lock it out. While
 * the cache cannot count, a write fails closed like rateLimit (503) and a read
 * is counted in this process alone (the insurance limiter): the seller's
 * reads go on through a cache outage, their writes and sign-ins wait for it.
 */
export class AuthFailureLimit {
  private readonly failures: Limiter;

  constructor(
    cache: Cache,
    readonly limit: number,
    private readonly windowSeconds = 60,
  ) {
    this.failures = cache.limiter({ name: "auth-failures", limit, windowSeconds });
  }

  private keysOf(attempt: AuthAttempt): string[] {
    return [`ip:${attempt.ip}`, ...(attempt.keyPrefix ? [`prefix:${attempt.keyPrefix}`] : [])];
  }

  /** Throws 429 with Retry-After when the address (before resolving) or the prefix (after a failed resolution) is over the limit; counts nothing. */
  async refuseIfOver(attempt: AuthAttempt, res: Response, which: "address" | "prefix"): Promise<void> {
    const key = which === "address" ? `ip:${attempt.ip}` : attempt.keyPrefix ? `prefix:${attempt.keyPrefix}` : undefined;
    if (key === undefined) return;
    const window = await counted(() => this.failures.peek(key, whenCacheDown(attempt)));
    // `limit` failures close the window: no further attempt is admitted.
    if (window === null || window.allowed) return;
    res.setHeader("Retry-After", String(window.resetSeconds));
    throw new ProblemError("rate-limited", {
      message: `Too many failed authentications from this address or with this key prefix: at most ${this.limit} in ${this.windowSeconds} seconds.`,
      help: { fix: `Check the key you send, then retry after ${window.resetSeconds} seconds.`, retry_is_safe: true },
    });
  }

  /** Counts a failure against the address and the prefix; being over the limit is for refuseIfOver to answer. */
  async recordFailure(attempt: AuthAttempt): Promise<void> {
    await counted(() => Promise.all(this.keysOf(attempt).map((k) => this.failures.consume(k, whenCacheDown(attempt)))));
  }
}

const whenCacheDown = (attempt: AuthAttempt): CountOptions => ({ whenStoreDown: attempt.read ? "count-in-process" : "reject" });
