import type { Face } from "../faces/face";
import { escapeHtml } from "./html";

/** The page a browser gets from a face instead of the 402's JSON body (still with PAYMENT-REQUIRED). */
export function payPage(title: string, body: { offer: { total_usd: string; description: string | null }; endpoint: { url: string } }, face: Face): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head>
<body><main><h1>${escapeHtml(title)}</h1>${body.offer.description ? `<p>${escapeHtml(body.offer.description)}</p>` : ""}
<p>Price: <strong>${escapeHtml(body.offer.total_usd)} USDC</strong> (fee included)${face === "test" ? " — rehearsal: settles without real money" : ""}.</p>
<p>Pay with an x402 client at <code>${escapeHtml(body.endpoint.url)}</code>; request it with <code>Accept: application/json</code> for the payment requirements.</p></main></body></html>`;
}
