import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "@c402/logging";
import { HEADERS } from "@c402/x402";
import { logWhenFinished, requestIdOf } from "./request-context";
import type { QuoteCache } from "./quote-cache";
import { FACE_HEADERS, type UnpaidAnswer } from "./routes/faces";

/** `/c/{id}` or `/c/{id}/test`, optionally asking for the v1 body, and nothing else. */
const UNPAID_FACE = /^\/c\/(chk_[0-9A-Za-z]{24})(\/test)?(?:\?x402_version=([12]))?$/;

/**
 * The hot path of the product: an agent asking a face for its price. When the
 * answer is already in the QuoteCache, it is written straight to the socket
 * with the same headers the express route sends, skipping the framework.
 * Anything else (a payment, a browser, other query parameters, a cache miss)
 * returns false and goes through express as usual.
 */
export function unpaidFastPath(quotes: QuoteCache<UnpaidAnswer>, logger: Logger) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== "GET" || req.url === undefined) return false;
    const match = UNPAID_FACE.exec(req.url);
    if (!match) return false;
    const h = req.headers;
    if (h["payment-signature"] !== undefined || h["x-payment"] !== undefined) return false;
    // Browsers get the pay page from the express route.
    if (h.accept?.includes("text/html")) return false;
    const [, checkoutId, test, version] = match as unknown as [string, string, string | undefined, string | undefined];
    const answer = quotes.get(checkoutId, `${test ? "test" : "live"}:${version ?? "2"}`);
    if (!answer) return false;

    const requestId = requestIdOf(typeof h["x-request-id"] === "string" ? h["x-request-id"] : undefined);
    logWhenFinished(logger, res, requestId, req.method, req.url.split("?")[0] as string);
    res.statusCode = 402;
    res.setHeader("X-Request-Id", requestId);
    for (const [name, value] of FACE_HEADERS) res.setHeader(name, value);
    res.setHeader("Cache-Control", "no-store");
    res.setHeader(HEADERS.paymentRequired, answer.header);
    res.setHeader("Content-Type", "application/json; charset=utf-8");
    res.setHeader("Content-Length", Buffer.byteLength(answer.json));
    res.end(answer.json);
    return true;
  };
}
