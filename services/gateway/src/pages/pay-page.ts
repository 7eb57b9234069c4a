import { randomBytes } from "node:crypto";
import { framingOrigins } from "@c402/contracts";
import type { Face } from "../faces/face";
import { escapeHtml } from "../views/html";
import { qrSvg } from "../views/qr";
import { networkLabel, pageNetworkOf } from "./networks";
import type { PayPageData, PageNetwork } from "./page-data";
import { ASSET_PATHS } from "./static-assets";

/** What a pay page shows: the face's 402 as a person sees it. */
export interface PayPageInput {
  kind: PayPageData["kind"];
  checkoutId: string;
  face: Face;
  /** The face's absolute URL (/c/{id}, /c/{id}/test, /e/…, /x/…). */
  faceUrl: string;
  title: string;
  offer: { description: string | null; price_usd: string; fee_usd: string; total_usd: string; calls_included: number | null };
  accepts: readonly { network: string; payTo: string }[];
  /** The face settles simulated: a rehearsal, or a live face the seller has not armed. */
  simulated: boolean;
  /** The live face, named on a rehearsal once the seller has gone live. */
  liveUrl: string | null;
  walletButton: boolean;
  /** The account's embed origins (and an article's canonical origin): who may frame the page. */
  frameOrigins: readonly (string | null | undefined)[];
  /** The query the page was opened with: the buyer's call parameters, and `h` when a QR on another screen led here. */
  params: Record<string, string>;
  handoffIn: string | undefined;
  series: boolean;
  article?: { teaser: string | null; byline: string; passHours: number; language: string; passQuery: string };
}

/** Where each kind of face keeps its handoff poll: /x has none (a reader pays on the device that reads). */
const HANDOFF_FACES: ReadonlySet<PayPageData["kind"]> = new Set(["checkout", "escrow"]);

/**
 * The pay page a browser gets from a face, with its headers. Everything a
 * person needs is in the markup (offer, price with the fee, recipient, a QR
 * code, the agent's instructions); /static/pay.js adds the buyer's wallets.
 * The policy allows this origin's script and styles only, no inline script.
 */
export async function payPage(p: PayPageInput): Promise<{ html: string; headers: [string, string][] }> {
  const path = new URL(p.faceUrl).pathname;
  const nonce = HANDOFF_FACES.has(p.kind) ? randomBytes(18).toString("base64url") : null;
  const query = new URLSearchParams({ ...p.params, ...(p.handoffIn !== undefined ? { h: p.handoffIn } : {}) }).toString();
  // A simulated face prepares nothing for Solana (its rehearsal verifies a transaction an x402 SVM client built), so its wallets pay on EVM.
  const networks = p.accepts.map(pageNetworkOf).filter((n): n is PageNetwork => n !== null && !(p.simulated && n.family === "solana"));
  const idPath = path.replace(/\/test$/, "");
  const data: PayPageData = {
    v: 1,
    kind: p.kind,
    checkout_id: p.checkoutId,
    face: p.face,
    face_url: p.faceUrl,
    prepare_url: `${path}/prepare`,
    pay_url: `${path}/pay${query ? `?${query}` : ""}`,
    params: p.params,
    handoff: nonce ? { nonce, poll_url: `${idPath}/handoff/${nonce}` } : null,
    networks: networks.filter((n, i) => networks.findIndex((o) => o.network === n.network) === i),
    wallet_button: p.walletButton,
    frame_origins: framingOrigins(p.frameOrigins),
    series: p.series,
  };
  // The phone opens the same call (its parameters) and names this page's nonce, so the page sees its payment.
  const qrQuery = new URLSearchParams({ ...p.params, ...(nonce ? { h: nonce } : {}) }).toString();
  const qrUrl = qrQuery ? `${p.faceUrl}?${qrQuery}` : p.faceUrl;
  const html = `<!doctype html>
<html lang="${escapeHtml(p.article?.language ?? "en")}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(p.title)}</title><meta name="robots" content="noindex"><link rel="stylesheet" href="${ASSET_PATHS.css}">
</head><body><main class="svc-page">
<header><h1>${escapeHtml(p.title)}</h1>${p.article?.byline ? `<p class="c402-byline">${escapeHtml(p.article.byline)}</p>` : ""}${description(p)}</header>
${rehearsalNote(p)}${priceSection(p)}${walletSection(p)}${qrSection(p, await qrSvg(qrUrl))}${agentSection(p)}
</main>
<script type="application/json" id="svc-data">${jsonForScript(data)}</script>
<script src="${ASSET_PATHS.pay}" defer></script>
</body></html>
`;
  return { html, headers: payPageHeaders(data.frame_origins) };
}

/** The page's policy: this origin's script, styles and fetches only; framed by the allowlisted origins or by nothing. */
export function payPageHeaders(frameOrigins: readonly string[]): [string, string][] {
  const ancestors = frameOrigins.length > 0 ? frameOrigins.join(" ") : "'none'";
  const headers: [string, string][] = [
    [
      "Content-Security-Policy",
      `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${ancestors}`,
    ],
    ["Referrer-Policy", "no-referrer"],
    ["X-Content-Type-Options", "nosniff"],
  ];
  if (frameOrigins.length === 0) headers.push(["X-Frame-Options", "DENY"]);
  return headers;
}

function description(p: PayPageInput): string {
  const text = p.article ? p.article.teaser : p.offer.description;
  return text ? `<p class="${p.article ? "c402-teaser" : "svc-description"}">${escapeHtml(text)}</p>` : "";
}

function rehearsalNote(p: PayPageInput): string {
  if (!p.simulated) return "";
  const live =
    p.face === "test"
      ? p.liveUrl
        ? ` The live checkout is at <a href="${escapeHtml(p.liveUrl)}">${escapeHtml(p.liveUrl)}</a>.`
        : " The seller has not gone live yet."
      : " The seller has not gone live yet.";
  return `<p class="svc-rehearsal" role="note"><strong>Rehearsal:</strong> this page settles without real money (simulated settlement); nothing moves on-chain.${live}</p>\n`;
}

function priceSection(p: PayPageInput): string {
  const recipients = p.accepts.map(
    (a) =>
      `<li><span class="svc-network">${escapeHtml(networkLabel(a.network))}</span> <code class="svc-address">${escapeHtml(a.payTo)}</code>${p.kind === "escrow" ? " (the escrow contract, which holds the payment)" : ""}</li>`,
  );
  const calls = p.offer.calls_included !== null ? `<p>Includes ${p.offer.calls_included} calls.</p>` : "";
  const pass = p.article ? `<p>The rest is for paying readers. A payment answers a pass that opens it again for ${p.article.passHours} hours.</p>` : "";
  return `<section class="svc-price" data-part="price" aria-labelledby="svc-price-heading">
<h2 id="svc-price-heading">Price</h2>
<p class="svc-total"><strong>${escapeHtml(p.offer.total_usd)} USDC</strong> (fee included${p.face === "test" ? "; rehearsal: settles without real money" : ""})</p>
<p class="svc-breakdown">${escapeHtml(p.offer.price_usd)} USD to the seller + ${escapeHtml(p.offer.fee_usd)} USD fee</p>${calls}${pass}
<h3>Paid to</h3><ul class="svc-recipients">${recipients.join("")}</ul>
</section>
`;
}

function walletSection(p: PayPageInput): string {
  const links = mobileWalletLinks(p);
  return `<section class="svc-pay" data-part="wallet" aria-labelledby="svc-pay-heading">
<div id="svc-choose"><h2 id="svc-pay-heading">Pay with your wallet</h2>
<p class="svc-needs-js">Paying from this page needs JavaScript: scan the QR code with a phone wallet, or give the address below to an agent.</p>
<ul id="svc-wallets" class="svc-wallets"></ul>
<p id="svc-no-wallet" hidden>No browser wallet found on this device. Scan the QR code with your phone's wallet; this page shows the payment when it lands.</p>
${links ? `<div id="svc-mobile" hidden><p>Open this checkout in your wallet app:</p><ul class="svc-links">${links}</ul></div>` : ""}
<p><a id="svc-open" class="svc-button" href="${escapeHtml(p.faceUrl)}" target="_blank" rel="noopener" hidden>Buy on the checkout page</a></p></div>
<p id="svc-status" role="status" aria-live="polite"></p>
<div id="svc-result" tabindex="-1" hidden><h2 id="svc-result-heading">Paid</h2><pre id="svc-goods" class="svc-goods"></pre><p><a id="svc-receipt" hidden>Receipt</a></p></div>
</section>
`;
}

/** Open-in-wallet links for a phone without an injected wallet: the wallet app's own browser opens this page. */
function mobileWalletLinks(p: PayPageInput): string {
  const families = new Set(p.accepts.map(pageNetworkOf).map((n) => n?.family));
  const target = p.faceUrl;
  const links: [string, string][] = [];
  if (families.has("evm")) {
    links.push(["MetaMask", `https://metamask.app.link/dapp/${target.replace(/^https?:\/\//, "")}`]);
    links.push(["Coinbase Wallet", `https://go.cb-w.com/dapp?cb_url=${encodeURIComponent(target)}`]);
  }
  if (families.has("solana"))
    links.push(["Phantom", `https://phantom.app/ul/browse/${encodeURIComponent(target)}?ref=${encodeURIComponent(new URL(target).origin)}`]);
  return links.map(([name, href]) => `<li><a href="${escapeHtml(href)}" rel="noopener">${escapeHtml(name)}</a></li>`).join("");
}

function qrSection(p: PayPageInput, svg: string): string {
  return `<section class="svc-qr" data-part="qr" aria-labelledby="svc-qr-heading">
<h2 id="svc-qr-heading">Pay from your phone</h2>
<figure><div class="svc-qr-code" role="img" aria-label="QR code of this checkout's address">${svg}</div>
<figcaption>Scan with a phone wallet's camera; ${HANDOFF_FACES.has(p.kind) ? "this page shows the payment once it lands." : "the article opens there once paid."}</figcaption></figure>
</section>
`;
}

function agentSection(p: PayPageInput): string {
  const url = escapeHtml(p.faceUrl);
  const pass = p.article ? `<p>Already paid? Open <code>${url}?${escapeHtml(p.article.passQuery)}=&lt;your pass&gt;</code>.</p>` : "";
  return `<section class="svc-agent" data-part="agent" aria-labelledby="svc-agent-heading">
<h2 id="svc-agent-heading">For agents</h2>
<p>Pay with an x402 client at <code>${url}</code>: request it with <code>Accept: application/json</code> for the payment requirements (also in the <code>PAYMENT-REQUIRED</code> header), sign one, and request it again with the payment in <code>PAYMENT-SIGNATURE</code>. The goods and the receipt come back in that answer. <code>${url}/prepare</code> returns the typed data to sign for a given payer.</p>${pass}
</section>
`;
}

/** JSON inside a data block: `<` escaped, so nothing in it can close the element. */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}
