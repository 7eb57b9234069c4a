import type { Cache } from "@c402/cache";
import { ProblemError } from "@c402/problems";
import type { NextFunction, Request, RequestHandler, Response } from "express";

/**
 * Fixed-window limit per client address, shared across gateway replicas
 * through the cache. It fails closed: when the cache cannot count, the
 * request is refused with 503 rather than let through unmetered.
 */
export function rateLimit(cache: Cache, opts: { name: string; limit: number; windowSeconds: number }): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    let window;
    try {
      window = await cache.hit(`rl:${opts.name}:${req.ip ?? "unknown"}`, opts.windowSeconds);
    } catch {
      throw new ProblemError("unavailable", {
        message: "Rate limiting is unavailable, so this endpoint is closed for the moment.",
        help: { retry_is_safe: true, fix: "Retry shortly." },
      });
    }
    res.setHeader("X-RateLimit-Limit", String(opts.limit));
    res.setHeader("X-RateLimit-Remaining", String(Math.max(0, opts.limit - window.count)));
    res.setHeader("X-RateLimit-Reset", String(window.resetSeconds));
    if (window.count > opts.limit) {
      res.setHeader("Retry-After", String(window.resetSeconds));
      throw new ProblemError("rate-limited", {
        message: `More than ${opts.limit} requests in ${opts.windowSeconds} seconds.`,
        help: { fix: `Retry after ${window.resetSeconds} seconds.`, retry_is_safe: true },
      });
    }
    next();
  };
}
