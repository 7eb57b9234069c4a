import type { Logger } from "@c402/logging";
import { PROBLEM_CONTENT_TYPE, ProblemError, toProblemDocument } from "@c402/problems";
import type { NextFunction, Request, Response } from "express";

export function sendProblem(res: Response, problem: ProblemError, siteUrl: string): void {
  res
    .status(problem.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(toProblemDocument(problem, siteUrl)));
}

export function notFound(_req: Request, _res: Response, next: NextFunction): void {
  next(new ProblemError("not-found", "No such endpoint."));
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

/** The one place errors become responses: problem documents, never stack traces. */
export function errorHandler(siteUrl: string, logger: Logger) {
  // Express recognises error handlers by their four parameters.
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    let problem: ProblemError;
    if (err instanceof ProblemError) problem = err;
    else if ((err as BodyParserError)?.type === "entity.too.large")
      problem = new ProblemError("bad-request", { message: "The request body is too large.", extensions: { status_reason: "body_too_large" } });
    else if ((err as BodyParserError)?.type === "entity.parse.failed") problem = new ProblemError("bad-request", "The request body is not valid JSON.");
    else {
      logger.error({ err, request_id: req.requestId, path: req.path }, "unhandled error");
      problem = new ProblemError("internal", "The service failed to handle this request.");
    }
    if (res.headersSent) return;
    sendProblem(res, problem, siteUrl);
  };
}
