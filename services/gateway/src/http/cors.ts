import type { NextFunction, Request, Response } from "express";
import { hasIdShape } from "@c402/ids";
import { FACE_HEADERS } from "../faces/answers";

/** The faces' and receipts' headers on every answer under /c, /x, /e and /r, and their CORS preflight. */
export function faceCors(req: Request, res: Response, next: NextFunction): void {
  for (const [name, value] of FACE_HEADERS) res.setHeader(name, value);
  if (req.method === "OPTIONS") {
    res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    res.setHeader("Access-Control-Allow-Headers", "PAYMENT-SIGNATURE, X-PAYMENT, X-Service-Grant, Access-Control-Expose-Headers, Content-Type, Accept");
    res.setHeader("Access-Control-Max-Age", "600");
    res.status(204).end();
    return;
  }
  next();
}

/**
 * A series' buyer view (/schedule/{id}, ADR 20) is a buyer face: it answers as
 * /c, /e and /r do. A slug there is the seller catalogue's page, left alone.
 */
export function seriesCors(req: Request, res: Response, next: NextFunction): void {
  if (hasIdShape(req.path.split("/")[1] ?? "")) return faceCors(req, res, next);
  next();
}

/**
 * CORS for /mcp, open to every origin: a browser-based MCP client may call it.
 * That is safe because /mcp authenticates by the Authorization header alone,
 * never by a cookie a browser would attach on its own.
 */
export function mcpCors(req: Request, res: Response, next: NextFunction): void {
  res.setHeader("Access-Control-Allow-Origin", "*");
  res.setHeader("Access-Control-Expose-Headers", "WWW-Authenticate");
  if (req.method === "OPTIONS") {
    res.setHeader("Access-Control-Allow-Methods", "POST, OPTIONS");
    res.setHeader("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID");
    res.setHeader("Access-Control-Max-Age", "600");
    res.status(204).end();
    return;
  }
  next();
}
