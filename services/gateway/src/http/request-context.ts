import type { Logger } from "@c402/logging";
import { httpRequestDuration } from "@c402/metrics";
import { isTraceparent, newRequestId, newTraceparent, runWithContext, traceIdOf, type RequestContext } from "@c402/rpc";
import { openSpan, SpanKind } from "@c402/tracing";
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

/**
 * Opens the request's server span and, when the answer is sent, writes its one
 * structured log line, its latency metric (by route template, never the raw
 * path: ids would make every request a series of its own) and ends the span.
 * Returns the context the rest of the request runs in.
 */
export function observeRequest(
  logger: Logger,
  res: ServerResponse,
  request: { requestId: string; traceparent: string | undefined; method: string; path: string },
  route: () => string,
): RequestContext {
  const started = process.hrtime.bigint();
  const { requestId, method, path } = request;
  const incoming = isTraceparent(request.traceparent) ? request.traceparent : undefined;
  const span = openSpan(method, {
    kind: SpanKind.SERVER,
    parent: { requestId, ...(incoming ? { traceparent: incoming } : {}) },
    attributes: { "http.request.method": method, "url.path": path },
  });
  // A request that comes without a (valid) trace context starts one, so every request is one trace.
  const context = span.context?.traceparent ? span.context : { requestId, traceparent: incoming ?? newTraceparent() };
  let ended = false;
  const end = (status: number | undefined) => {
    if (ended) return;
    ended = true;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const template = route();
    span.setAttributes({ "http.route": template, ...(status !== undefined ? { "http.response.status_code": status } : {}) });
    span.end(status === undefined ? new Error("connection closed before the answer") : status >= 500 ? new Error(`status ${status}`) : undefined);
    if (status === undefined) return;
    httpRequestDuration.observe({ method, route: template, status: String(status) }, seconds);
    logger.info(
      { request_id: requestId, trace_id: traceIdOf(context.traceparent as string), method, path, status, duration_ms: Math.round(seconds * 1e4) / 10 },
      "request",
    );
  };
  res.on("finish", () => end(res.statusCode));
  res.on("close", () => end(undefined));
  return context;
}

/** The route template an express request matched ("unmatched" when none did). */
export function routeOf(req: Request): string {
  const route = (req as { route?: { path?: unknown } }).route;
  return route?.path !== undefined ? `${req.baseUrl ?? ""}${String(route.path)}` : "unmatched";
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
    const context = observeRequest(logger, res, { requestId: req.requestId, traceparent: req.get("traceparent"), method: req.method, path: req.path }, () =>
      routeOf(req),
    );
    runWithContext(context, () => next());
  };
}
