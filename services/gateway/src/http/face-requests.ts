import { isId } from "@c402/ids";
import { invalid, ProblemError } from "@c402/problems";
import { HEADERS } from "@c402/x402";
import type { Request } from "express";
import type { WireVersion } from "../faces/face";
import { WIRE_VERSION_PARAM } from "../views/payment-required";

/** What the face and receipt routes read from a request. */

/** The checkout a face path names; 404 for anything but a checkout id (faces are separate namespaces: only a chk_ id lives under /c/). */
export function checkoutIdOf(req: Request): string {
  const id = String(req.params.id);
  if (!isId("checkout", id)) throw new ProblemError("not-found", "No such checkout.");
  return id;
}

/** Which x402 body the buyer asked for: v2 unless the URL says `x402_version=1`. */
export function wireVersionOf(req: Request): WireVersion {
  const asked = req.query[WIRE_VERSION_PARAM];
  if (asked === undefined || asked === "2") return 2;
  if (asked === "1") return 1;
  throw invalid([{ field: WIRE_VERSION_PARAM, reason: "must be 1 or 2" }]);
}

/** A browser asking for a page (JSON wins whenever the client names it). */
export function wantsHtml(req: Request): boolean {
  return req.accepts(["application/json", "text/html"]) === "text/html" && !req.get("accept")?.includes("application/json");
}

/** The payment a request presents, if any: PAYMENT-SIGNATURE, or the legacy X-PAYMENT (answered with X-PAYMENT-RESPONSE too). */
export function paymentOf(req: Request): { header: string; legacy: boolean } | undefined {
  const signature = req.get(HEADERS.paymentSignature);
  const header = signature ?? req.get(HEADERS.legacyPayment);
  return header === undefined ? undefined : { header, legacy: signature === undefined };
}

/** The handoff nonce a paid request carries (`?h=`), if any. */
export function handoffOf(req: Request): string | undefined {
  return typeof req.query.h === "string" ? req.query.h : undefined;
}

/** Query parameters a face reads itself; every other one is the buyer's call parameter. */
const FACE_PARAMS: ReadonlySet<string> = new Set(["h", WIRE_VERSION_PARAM]);

/**
 * The buyer's call parameters (a relay checkout's origin gets them as query
 * parameters, `body` as the body of a POST, PUT or PATCH): every query
 * parameter but the face's own, each given once. Fulfillment bounds them.
 */
export function callParamsOf(req: Request): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.query)) {
    if (FACE_PARAMS.has(name)) continue;
    if (typeof value !== "string") throw invalid([{ field: `params.${name.slice(0, 100)}`, reason: "must be given once, as a plain value" }]);
    params[name] = value;
  }
  return params;
}
