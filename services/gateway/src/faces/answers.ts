import { ProblemError, toProblemDocument } from "@c402/problems";
import { encodeHeader, HEADERS, type PaymentRequired } from "@c402/x402";
import { faceUrl } from "../views/checkouts";
import type { paymentRequiredBody } from "../views/payment-required";
import type { Face, WireVersion } from "./face";
import { QuoteCache } from "./quote-cache";

/**
 * The answers of the faces that the express routes (http/routes/faces.ts)
 * and the socket fast path (./fast-path.ts) both give, built here so that
 * both answer alike: the headers of every face answer, the cached unpaid 402
 * and the 402 refusing a payment.
 */

/**
 * Headers of every face and receipt answer. CORS for browser buyers: the x402
 * headers must cross, both ways. Nothing may frame a face or a receipt,
 * except a page the seller's embed origins may frame (http/embed-origins.ts).
 */
export const FACE_HEADERS: readonly (readonly [string, string])[] = [
  ["X-Frame-Options", "DENY"],
  ["Content-Security-Policy", "frame-ancestors 'none'"],
  ["Access-Control-Allow-Origin", "*"],
  [
    "Access-Control-Expose-Headers",
    "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, X-Request-Id, X-Service-Grant-Uses-Left, X-Service-Grant-Expires-In, X-Service-Grant-Refused",
  ],
];

/** The goods of a checkout and whether it keeps selling after a sale. */
export interface Goods {
  /** How the checkout fulfils (inline goods, or webhook: the seller fulfils after the sale). */
  mode: string;
  payloadJson: string | undefined;
  reusable: boolean;
}

/** The cached unpaid answer of one face in one wire version. */
export interface UnpaidAnswer {
  title: string;
  /** The seller's account: whose embed origins may frame the pay page. */
  accountId: string;
  /** The goods and whether the checkout keeps selling after a sale, as of the quote. */
  goods: Goods;
  /** What the pay page needs beyond the 402: in-frame wallet payment asked for (create field wallet_button), and a series. */
  page: { walletButton: boolean; series: boolean };
  required: PaymentRequired;
  header: string;
  body: ReturnType<typeof paymentRequiredBody>["body"];
  json: string;
}

/** How long an unpaid 402 may be reused (see QuoteCache), and how many are kept. */
export const QUOTE_CACHE_MS = 1_000;
const QUOTE_CACHE_ENTRIES = 10_000;

/** The unpaid answers of the faces, kept briefly; shared by the routes and the fast path. */
export type FaceQuotes = QuoteCache<UnpaidAnswer>;

export function newFaceQuotes(): FaceQuotes {
  return new QuoteCache(QUOTE_CACHE_MS, QUOTE_CACHE_ENTRIES);
}

/** The cache variant of a face's answer in one wire version. */
export const variantOf = (face: Face, wireVersion: WireVersion): string => `${face}:${wireVersion}`;

/** Every cached variant of a checkout's faces (face × wire version). */
export const FACE_QUOTE_VARIANTS = ["live:1", "live:2", "test:1", "test:2"] as const;

/** Forgets every cached answer of a checkout's faces (its state changed here: a go-live, a single-shot's sale). */
export function forgetFaces(quotes: FaceQuotes, checkoutId: string): void {
  quotes.invalidate(checkoutId, FACE_QUOTE_VARIANTS);
}

/**
 * The 402 answer to a refused payment: the problem document with the face's
 * current requirements (`accepts`), the PAYMENT-REQUIRED header naming the
 * reason and, when a settlement was attempted and failed, the failure
 * SettleResponse in PAYMENT-RESPONSE (as the official server sends it).
 */
export function refusalAnswer(r: {
  current: UnpaidAnswer | undefined;
  checkoutId: string;
  face: Face;
  legacy: boolean;
  err: ProblemError;
  urls: { baseUrl: string; siteUrl: string };
}): { headers: [string, string][]; json: string } {
  const { err } = r;
  const headers: [string, string][] = [];
  const reason = typeof err.extensions.reason === "string" ? err.extensions.reason : err.message;
  const settlement = err.extensions.settlement;
  if (typeof settlement === "object" && settlement !== null) {
    const failure = encodeHeader({ success: false, errorReason: reason, errorMessage: err.message, ...settlement });
    headers.push([HEADERS.paymentResponse, failure]);
    if (r.legacy) headers.push([HEADERS.legacyPaymentResponse, failure]);
  }
  const fresh = r.current ? { ...r.current.required, error: reason } : undefined;
  if (fresh) headers.push([HEADERS.paymentRequired, encodeHeader(fresh)]);
  const prepare = `${faceUrl(r.urls.baseUrl, r.checkoutId, r.face)}/prepare`;
  const problem = new ProblemError("payment-required", {
    message: err.message,
    help: { ...err.help, prepare: err.help.prepare ?? `POST ${prepare} with {"payer": "<address>"} returns the typed data to sign.` },
    extensions: err.extensions,
  });
  return { headers, json: JSON.stringify({ ...toProblemDocument(problem, r.urls.siteUrl), accepts: fresh?.accepts ?? [] }) };
}
