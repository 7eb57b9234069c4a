import type { NextFunction, Request, Response } from "express";
import { FACE_HEADERS } from "../faces/answers";

/** The faces' and receipts' headers on every answer under /c and /r, and their CORS preflight. */
export function faceCors(req: Request, res: Response, next: NextFunction): void {
  for (const [name, value] of FACE_HEADERS) res.setHeader(name, value);
  if (req.method === "OPTIONS") {
    res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    res.setHeader("Access-Control-Allow-Headers", "PAYMENT-SIGNATURE, X-PAYMENT, Access-Control-Expose-Headers, Content-Type, Accept");
    res.setHeader("Access-Control-Max-Age", "600");
    res.status(204).end();
    return;
  }
  next();
}
