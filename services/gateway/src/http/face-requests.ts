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

/** The escrow checkout an /e/ path names; 404 for anything but an esc_ id (an ordinary checkout lives under /c/ only). */
export function escrowIdOf(req: Request): string {
  const id = String(req.params.id);
  if (!isId("escrowCheckout", id)) throw new ProblemError("not-found", "No such escrow checkout.");
  return id;
}

/** The gated article a /x/ path names; 404 for anything but a cnt_ id (an ordinary checkout lives under /c/ only). */
export function articleIdOf(req: Request): string {
  const id = String(req.params.id);
  if (!isId("contentCheckout", id)) throw new ProblemError("not-found", "No such article.");
  return id;
}

/** A gated article's call parameters (a relay article's origin gets them): the buyer's, never the pass. */
export function articleParamsOf(req: Request): Record<string, string> {
  const { grant: _pass, ...params } = callParamsOf(req);
  return params;
}

/** The pass a reader presents: the X-Service-Grant header, else the `grant` query parameter. */
export function passOf(req: Request): string | undefined {
  const header = req.get("x-service-grant");
  if (header !== undefined) return header.trim();
  return typeof req.query.grant === "string" ? req.query.grant : undefined;
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

/**
 * A package key's mark: a bearer token that starts `pk_` makes a face request
 * a package call, whatever follows (one that is not a key of the checkout is
 * 401, as the spec's Errors table has it, never an ordinary 402).
 */
const PACKAGE_KEY_BEARER = /^Bearer\s+(pk_\S*)$/i;

/**
 * The package key a request spends (`Authorization: Bearer pk_…`), if any.
 * Any other Authorization header is not ours to judge on a public face and
 * leaves the request an ordinary one (402 without a payment).
 */
export function packageKeyOf(req: Request): string | undefined {
  return packageKeyIn(req.get("authorization"));
}

/** The package key an Authorization header value carries, if any. */
export function packageKeyIn(authorization: string | undefined): string | undefined {
  return authorization?.trim().match(PACKAGE_KEY_BEARER)?.[1];
}

/** The usage record's calls per page: at most 100, 100 unless `limit` says fewer. */
export const USAGE_PAGE_MAX = 100;

/** Which page of a usage record's calls a request asks for: `limit` (1 to 100) and `before` (a call's seq). */
export function usagePageOf(req: Request): { size: number; before?: number } {
  const errors: { field: string; reason: string }[] = [];
  const int = (name: string, min: number, max: number): number | undefined => {
    const v = req.query[name];
    if (v === undefined) return undefined;
    if (typeof v !== "string" || !/^\d{1,10}$/.test(v) || Number(v) < min || Number(v) > max) {
      errors.push({ field: name, reason: `must be an integer from ${min} to ${max}` });
      return undefined;
    }
    return Number(v);
  };
  const size = int("limit", 1, USAGE_PAGE_MAX) ?? USAGE_PAGE_MAX;
  const before = int("before", 1, 2_147_483_647);
  if (errors.length) throw invalid(errors);
  return { size, ...(before !== undefined ? { before } : {}) };
}

/** The handoff nonce a paid request carries (`?h=`), if any. */
export function handoffOf(req: Request): string | undefined {
  return typeof req.query.h === "string" ? req.query.h : undefined;
}

/** Query parameters a face reads itself; every other one is the buyer's call parameter (inline articles take none). */
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
