import type { Logger } from "@c402/logging";
import { isTraceparent, newRequestId, runWithContext } from "@c402/rpc";
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

/**
 * Assigns the request id (a sane incoming X-Request-Id is kept), runs the rest
 * of the request inside the rpc context so gRPC calls carry it, and writes one
 * structured log line per request: never headers, query strings or bodies.
 */
export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.get("x-request-id");
    req.requestId = incoming && REQUEST_ID.test(incoming) ? incoming : newRequestId();
    res.setHeader("X-Request-Id", req.requestId);
    const traceparent = req.get("traceparent");
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info({ request_id: req.requestId, method: req.method, path: req.path, status: res.statusCode, duration_ms: Math.round(ms * 10) / 10 }, "request");
    });
    runWithContext({ requestId: req.requestId, ...(isTraceparent(traceparent) ? { traceparent } : {}) }, () => next());
  };
}
