import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "@c402/logging";
import { paymentRefused, PROBLEM_CONTENT_TYPE } from "@c402/problems";
import { decodeHeader, HEADERS, parsePaymentPayload, PaymentHeaderError } from "@c402/x402";
import { observeRequest, requestIdOf } from "../http/request-context";
import { packageKeyIn } from "../http/face-requests";
import { FACE_HEADERS, refusalAnswer, variantOf, type FaceQuotes } from "./answers";

/** `/c/{id}` or `/c/{id}/test`, optionally asking for the v1 body, and nothing else. */
const FACE = /^\/c\/(chk_[0-9A-Za-z]{24})(\/test)?(?:\?x402_version=([12]))?$/;

/**
 * The hot paths of the product, answered straight on the socket with the same
 * status, headers and body the express routes send, skipping the framework,
 * when the face's answer is already in the QuoteCache:
 * - an agent asking a face for its price (the unpaid 402);
 * - a payment header that is not a payment at all (refused with the same
 *   parser payments applies first, G21).
 * Anything else (a payment to judge, a browser, a package call, other query
 * parameters, a cache miss) returns false and goes through express as usual. It builds
 * its answers with ./answers.ts, as the routes do, never from a route file.
 */
export function faceFastPath(quotes: FaceQuotes, logger: Logger, urls: { baseUrl: string; siteUrl: string }) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== "GET" || req.url === undefined) return false;
    const match = FACE.exec(req.url);
    if (!match) return false;
    const h = req.headers;
    const [, checkoutId, test, version] = match as unknown as [string, string, string | undefined, string | undefined];
    const face = test ? "test" : "live";
    const wireVersion = version === "1" ? 1 : 2;
    const signature = h["payment-signature"];
    const legacy = h["x-payment"];
    const payment = signature ?? legacy;
    if (payment !== undefined) {
      if (typeof payment !== "string") return false;
      const answer = quotes.get(checkoutId, variantOf(face, 2));
      if (!answer) return false;
      try {
        parsePaymentPayload(decodeHeader(payment));
        return false; // a payment: payments judges it
      } catch (err) {
        if (!(err instanceof PaymentHeaderError)) return false;
        const refusal = refusalAnswer({
          current: answer,
          checkoutId,
          face,
          legacy: signature === undefined,
          err: paymentRefused(err.reason, err.message),
          urls,
        });
        answerDirectly(req, res, refusal.headers, `${PROBLEM_CONTENT_TYPE}; charset=utf-8`, refusal.json);
        return true;
      }
    }
    // Browsers get the pay page, and package calls are spent, by the express route.
    if (h.accept?.includes("text/html") || packageKeyIn(h.authorization) !== undefined) return false;
    const answer = quotes.get(checkoutId, variantOf(face, wireVersion));
    if (!answer) return false;
    answerDirectly(req, res, [[HEADERS.paymentRequired, answer.header]], "application/json; charset=utf-8", answer.json);
    return true;
  };

  function answerDirectly(req: IncomingMessage, res: ServerResponse, headers: [string, string][], contentType: string, body: string): void {
    const requestId = requestIdOf(typeof req.headers["x-request-id"] === "string" ? req.headers["x-request-id"] : undefined);
    // Only GETs with a URL reach here (see faceFastPath).
    const path = (req.url ?? "").split("?")[0] as string;
    const traceparent = typeof req.headers.traceparent === "string" ? req.headers.traceparent : undefined;
    // The route template express would have matched, so both count as one route.
    const route = path.endsWith("/test") ? "/c/:id/test" : "/c/:id";
    observeRequest(logger, res, { requestId, traceparent, method: req.method ?? "GET", path }, () => route);
    res.statusCode = 402;
    res.setHeader("X-Request-Id", requestId);
    res.setHeader("X-Content-Type-Options", "nosniff");
    for (const [name, value] of FACE_HEADERS) res.setHeader(name, value);
    res.setHeader("Cache-Control", "no-store");
    for (const [name, value] of headers) res.setHeader(name, value);
    res.setHeader("Content-Type", contentType);
    res.setHeader("Content-Length", Buffer.byteLength(body));
    res.end(body);
  }
}
