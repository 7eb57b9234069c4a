import type { Logger } from "@c402/logging";
import { isTraceparent, newRequestId, newTraceparent, runWithContext, traceIdOf } from "@c402/rpc";
import type { ServerResponse } from "node:http";
import type { NextFunction, Request, Response } from "express";

const REQUEST_ID = /^[A-Za-z0-9_.:-]{8,128}$/;

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      requestId: string;
    }
  }
}

/** The request id: a sane incoming X-Request-Id is kept, anything else replaced. */
export function requestIdOf(incoming: string | undefined): string {
  return incoming && REQUEST_ID.test(incoming) ? incoming : newRequestId();
}

/** The request's trace context: a valid incoming traceparent is continued, else a trace starts here. */
export function traceparentOf(incoming: string | undefined): string {
  return isTraceparent(incoming) ? incoming : newTraceparent();
}

/** The one structured log line per request, written when the answer is sent. */
export function logWhenFinished(logger: Logger, res: ServerResponse, requestId: string, traceparent: string, method: string | undefined, path: string): void {
  const started = process.hrtime.bigint();
  res.on("finish", () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    logger.info(
      { request_id: requestId, trace_id: traceIdOf(traceparent), method, path, status: res.statusCode, duration_ms: Math.round(ms * 10) / 10 },
      "request",
    );
  });
}

/**
 * Headers every response carries, whoever answers it (express, the face fast
 * path, the raw client-error answers): no content sniffing, ever.
 */
export const NOSNIFF = ["X-Content-Type-Options", "nosniff"] as const;

/** For answers that carry a secret (a new key, a session): no cache may keep them. */
export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader("Cache-Control", "no-store");
  next();
}

/**
 * Assigns the request id (a sane incoming X-Request-Id is kept), sets the
 * headers every response carries, runs the rest of the request inside the
 * rpc context so gRPC calls carry it, and writes one structured log line per
 * request: never headers, query strings or bodies.
 */
export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    req.requestId = requestIdOf(req.get("x-request-id"));
    res.setHeader("X-Request-Id", req.requestId);
    res.setHeader(...NOSNIFF);
    // A request that comes without a (valid) trace context starts one, so every request is one trace.
    const traceparent = traceparentOf(req.get("traceparent"));
    logWhenFinished(logger, res, req.requestId, traceparent, req.method, req.path);
    runWithContext({ requestId: req.requestId, traceparent }, () => next());
  };
}
