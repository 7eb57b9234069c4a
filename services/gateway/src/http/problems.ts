import type { Logger } from "@c402/logging";
import { isOwnFailure, PROBLEM_CONTENT_TYPE, PROBLEM_STATUS, ProblemError, problemOf, type ProblemSlug, toProblemDocument } from "@c402/problems";
import type { Application, NextFunction, Request, Response } from "express";

export function sendProblem(res: Response, problem: ProblemError, siteUrl: string): void {
  res
    .status(problem.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(toProblemDocument(problem, siteUrl)));
}

/** The parts of Express's router this reads: each layer matches a path and holds a route or a nested router. */
interface RouterLayer {
  route?: { methods: Record<string, boolean | undefined> };
  handle?: { stack?: RouterLayer[] };
  match(path: string): { path: string } | false;
}

/** The methods the app's routes accept on `path` (HEAD wherever GET is); empty for a path no route has. */
export function methodsAllowedOn(app: Application, path: string): string[] {
  const found = new Set<string>();
  const walk = (stack: RouterLayer[], rest: string) => {
    for (const layer of stack) {
      let match: { path: string } | false;
      try {
        match = layer.match(rest);
      } catch {
        continue; // a malformed escape in the path: it matches nothing
      }
      if (!match) continue;
      if (layer.route) {
        for (const [method, on] of Object.entries(layer.route.methods)) if (on && method !== "_all") found.add(method.toUpperCase());
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack, rest.slice(match.path.length) || "/");
      }
    }
  };
  walk((app.router as unknown as { stack: RouterLayer[] }).stack, path);
  if (found.has("GET")) found.add("HEAD");
  return [...found].sort();
}

/**
 * After every route: 405 with `Allow` when the path exists under other
 * methods, else 404 (also when a route of this method declined the path: a
 * call URL's pattern that holds no slug and checkout id).
 */
export function notFound(req: Request, res: Response, next: NextFunction): void {
  const allowed = methodsAllowedOn(req.app, req.path);
  if (allowed.length === 0 || allowed.includes(req.method)) return next(new ProblemError("not-found", "No such endpoint."));
  res.setHeader("Allow", allowed.join(", "));
  next(new ProblemError("method-not-allowed", `${req.method} is not allowed on this path; it accepts ${allowed.join(", ")}.`));
}

/** What body-parser, raw-body, http-errors, zlib and the router attach to the errors they raise. */
interface HttpLibraryError extends Error {
  type?: string;
  status?: number;
  statusCode?: number;
  code?: string;
  limit?: number;
  charset?: string;
  encoding?: string;
}

/** The generic slug of each status: the first listed (422 is `invalid-request`, never a precise 422 such as `payout-account-missing`). */
const SLUG_OF_STATUS = new Map<number, ProblemSlug>(
  (Object.entries(PROBLEM_STATUS) as [ProblemSlug, number][]).reverse().map(([slug, status]) => [status, slug]),
);

/**
 * The problem for an error raised by the HTTP libraries, from its `type` or
 * `status`. An error with a 4xx status is the client's: it never becomes a 500.
 */
function problemOfLibraryError(err: unknown): ProblemError | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as HttpLibraryError;
  switch (e.type) {
    case "entity.too.large":
      return new ProblemError("payload-too-large", `The request body is larger than the ${e.limit ?? "allowed"} bytes this service accepts.`);
    case "entity.parse.failed":
      return new ProblemError("bad-request", "The request body is not valid JSON.");
    case "charset.unsupported":
      return new ProblemError("unsupported-media-type", `The body's charset ${e.charset ?? ""} is not supported; send JSON in UTF-8.`);
    case "encoding.unsupported":
      return new ProblemError(
        "unsupported-media-type",
        `The Content-Encoding ${e.encoding ?? ""} is not supported; send the body uncompressed or as gzip, deflate or br.`,
      );
  }
  const status = e.status ?? e.statusCode;
  if (typeof status !== "number" || status < 400 || status > 499) return undefined;
  if (err instanceof URIError) return new ProblemError("bad-request", "The path contains a malformed percent-escape.");
  if (e.code?.startsWith("Z_")) return new ProblemError("bad-request", "The request body could not be decompressed as its Content-Encoding says.");
  return new ProblemError(SLUG_OF_STATUS.get(status) ?? "bad-request", "The request could not be processed as sent.");
}

/** The 401 challenge (RFC 9110 §11.6.1, RFC 6750 §3); `invalid_token` when a credential was sent and refused. */
export function bearerChallenge(realm: string, credentialSent: boolean, oauth?: { resourceMetadata: string; scope: string }): string {
  const quote = (value: string) => `"${value.replace(/["\\]/g, "\\$&")}"`;
  const params = [`realm=${quote(realm)}`];
  if (credentialSent) params.push('error="invalid_token"');
  // RFC 9728 §5.1: where an OAuth client finds the authorization server, and the scopes to ask for.
  if (oauth) params.push(`resource_metadata=${quote(oauth.resourceMetadata)}`, `scope=${quote(oauth.scope)}`);
  return `Bearer ${params.join(", ")}`;
}

/** How long a client is told to wait after a 503 (an outage of a component, such as the cache that meters requests, is short). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Retry-After for a problem that says when a retry may succeed, and for every 503 (UNAVAILABLE_RETRY_AFTER_SECONDS when neither it nor the route says). */
export function setRetryAfter(res: Response, problem: ProblemError): void {
  if (problem.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(problem.retryAfterSeconds));
  else if (problem.status === 503 && !res.hasHeader("Retry-After")) res.setHeader("Retry-After", String(UNAVAILABLE_RETRY_AFTER_SECONDS));
}

/**
 * The one place errors become responses: problem documents, never stack
 * traces. Every 5xx is logged with the request id and the error (its stack
 * included), except a failure elsewhere (502 upstream-failed: a warning; isOwnFailure); 401s carry WWW-Authenticate; 503s, and any problem that says when
 * a retry may succeed (an Idempotency-Key in flight), carry Retry-After.
 */
export function errorHandler(siteUrl: string, logger: Logger, realm: string) {
  // Express recognises error handlers by their four parameters.
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const problem = err instanceof ProblemError ? err : (problemOfLibraryError(err) ?? problemOf(err));
    if (isOwnFailure(problem)) logger.error({ err, request_id: req.requestId, method: req.method, path: req.path, status: problem.status }, "request failed");
    else if (problem.status >= 500)
      logger.warn({ request_id: req.requestId, method: req.method, path: req.path, reason: problem.message }, "failed elsewhere (a seller's server)");
    // Failed mid-answer (a streamed export): the body is incomplete, so the connection is cut for the client to see it.
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (problem.status === 401) res.setHeader("WWW-Authenticate", bearerChallenge(realm, req.get("authorization") !== undefined));
    setRetryAfter(res, problem);
    sendProblem(res, problem, siteUrl);
  };
}
