import { ProblemError } from "@c402/problems";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";

const JSON_TYPES = ["application/json", "application/*+json"];
/**
 * Content codings accepted on a body. Others are refused with 415 whatever
 * this Node can decode (zstd only exists from Node 22.15), so the answer does
 * not depend on the runtime.
 */
const CODINGS = new Set(["identity", "gzip", "deflate", "br"]);

/** A body with at least one byte (clients send `Content-Length: 0` with an empty PUT or POST). */
function hasContent(req: Request): boolean {
  if (req.get("transfer-encoding") !== undefined) return true;
  const length = Number(req.get("content-length"));
  return Number.isFinite(length) && length > 0;
}

/**
 * Every body this API takes is JSON: a body of any other type or coding is
 * refused with 415 before it is read. GET and HEAD bodies have no meaning
 * here and are left alone.
 */
function onlyJsonBodies(req: Request, _res: Response, next: NextFunction): void {
  if (req.method === "GET" || req.method === "HEAD" || !hasContent(req)) return next();
  const coding = (req.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (!CODINGS.has(coding)) {
    throw new ProblemError("unsupported-media-type", `The Content-Encoding ${coding} is not supported; send the body uncompressed or as gzip, deflate or br.`);
  }
  if (!req.is(JSON_TYPES)) {
    throw new ProblemError(
      "unsupported-media-type",
      `Request bodies must be JSON (Content-Type application/json), not ${req.get("content-type") ?? "untyped"}.`,
    );
  }
  next();
}

/**
 * The JSON body parser: media type and coding checked first (415), then at
 * most `limitBytes` (413), in UTF-8 (415 for another charset); malformed JSON
 * or a corrupt compressed body is 400. The error handler maps each.
 */
export function jsonBody(limitBytes: number): RequestHandler[] {
  return [onlyJsonBodies, express.json({ limit: limitBytes, type: JSON_TYPES })];
}
