import { framingOrigins, type catalogV1, type ContentDeclaration } from "@c402/contracts";
import { formatUsd } from "@c402/money";
import { ProblemError } from "@c402/problems";
import { checkoutStatus, faceUrls } from "./checkouts";
import { escapeHtml } from "./html";
import { isoOrNull, jsonOrNull } from "./values";

/**
 * The public shapes of gated content (spec, Gated content): the seller's
 * read-back, the 402's `endpoint.article`, the snippet and its structured
 * data, and the paid article itself. The declaration travels normalized
 * (ContentDeclaration: every field present).
 */
/** Where a reader presents a pass (spec, Authentication item 10). */
export const PASS_HEADER = "X-Service-Grant";
export const PASS_QUERY = "grant";

/** The declaration of a gated article; undefined for any other checkout. */
export function declarationOf(c: catalogV1.Checkout): ContentDeclaration | undefined {
  return c.contentJson === undefined ? undefined : (JSON.parse(c.contentJson) as ContentDeclaration);
}

/** The declaration of a checkout known to be an article (a cnt_ id); one without is no article (404). */
export function articleDeclarationOf(c: catalogV1.Checkout): ContentDeclaration {
  const d = declarationOf(c);
  if (!d) throw new ProblemError("not-found", "No such article.");
  return d;
}

const TEASER_OPENING_CHARS = 280;
/** The opening never gives away more than this share of the article's text, however short it is. */
const TEASER_OPENING_SHARE = 1 / 3;

/**
 * The article's opening as plain text (tags dropped, spaces collapsed): at
 * most 280 characters and a third of the text, cut at a word, so a short
 * article is never given away whole by its teaser.
 */
function openingOf(payloadJson: string | undefined): string | null {
  const article = jsonOrNull(payloadJson);
  if (typeof article !== "string") return null;
  const text = article
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/&nbsp;/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  const room = Math.min(TEASER_OPENING_CHARS, Math.floor(text.length * TEASER_OPENING_SHARE));
  const cut = text.slice(0, room);
  const atWord = cut.lastIndexOf(" ") > room / 2 ? cut.slice(0, cut.lastIndexOf(" ")) : cut;
  return atWord ? `${atWord}…` : null;
}

/** The free part: the declared teaser, else the description, else the opening of the body (spec). */
export function teaserOf(c: catalogV1.Checkout, d: ContentDeclaration): string | null {
  return d.teaser ?? c.description ?? openingOf(c.payloadJson);
}

/** How a pass is used, as the 402 and the purchase tell it. */
export function passTerms(d: ContentDeclaration) {
  return {
    scope: d.pass_scope,
    hours: d.pass_hours,
    header: PASS_HEADER,
    query: PASS_QUERY,
    how: `Paying answers a pass (grant). Read the article again with the header ${PASS_HEADER}: <grant> (or ?${PASS_QUERY}=<grant>) until it expires${
      d.pass_scope === "seller" ? "; it opens every article this seller gates" : ""
    }.`,
  };
}

/** The 402's `endpoint.article`: what a reader sees before paying (never the body). */
export function articleBlock(c: catalogV1.Checkout, d: ContentDeclaration) {
  return {
    teaser: teaserOf(c, d),
    byline: { author: d.author, published: d.published },
    tags: d.keywords,
    section: d.section,
    language: d.language,
    canonical_url: d.canonical_url,
    license_url: d.license_url,
    pass: passTerms(d),
  };
}

/** GET /v1/content/{id} and get_content: the article as written plus the full declaration. */
export function contentView(c: catalogV1.Checkout, baseUrl: string) {
  const d = articleDeclarationOf(c);
  const urls = faceUrls(baseUrl, c.id);
  return {
    id: c.id,
    object: "content",
    ...urls,
    snippet_url: `${urls.url}/snippet`,
    status: checkoutStatus(c),
    test_mode: !c.armed,
    title: c.title,
    description: c.description ?? null,
    price_usd: formatUsd(c.priceAtomic),
    body: jsonOrNull(c.payloadJson),
    content: d,
    teaser: teaserOf(c, d),
    created_at: isoOrNull(c.createdAt),
    expires_at: isoOrNull(c.expiresAt),
  };
}

/**
 * schema.org Article markup of a paywalled article (search engines' form for
 * it: `isAccessibleForFree` false, the paid part named by its CSS selector).
 */
export function articleJsonLd(c: catalogV1.Checkout, d: ContentDeclaration, baseUrl: string) {
  const gateUrl = faceUrls(baseUrl, c.id).url;
  return {
    "@context": "https://schema.org",
    "@type": "Article",
    headline: c.title,
    description: teaserOf(c, d),
    url: d.canonical_url ?? gateUrl,
    ...(d.author !== null ? { author: { "@type": "Person", name: d.author } } : {}),
    ...(d.published !== null ? { datePublished: d.published } : {}),
    ...(d.keywords.length ? { keywords: d.keywords.join(", ") } : {}),
    ...(d.section !== null ? { articleSection: d.section } : {}),
    ...(d.language !== null ? { inLanguage: d.language } : {}),
    ...(d.license_url !== null ? { license: d.license_url } : {}),
    isAccessibleForFree: false,
    hasPart: { "@type": "WebPageElement", isAccessibleForFree: false, cssSelector: ".c402-paid" },
    offers: { "@type": "Offer", price: formatUsd(c.priceAtomic), priceCurrency: "USD", url: gateUrl },
  };
}

/**
 * GET /x/{id}/snippet: what a seller pastes into its own page. The snippet
 * works without any script: the teaser and a link to the gate, where a
 * browser gets the wall and an agent the 402.
 */
export function snippetView(c: catalogV1.Checkout, baseUrl: string) {
  const d = articleDeclarationOf(c);
  const gateUrl = faceUrls(baseUrl, c.id).url;
  const teaser = teaserOf(c, d);
  const price = formatUsd(c.priceAtomic);
  const jsonld = articleJsonLd(c, d, baseUrl);
  const snippet = [
    `<div class="c402-gate" data-svc="${escapeHtml(c.id)}" data-svc-content="true" data-svc-price="${escapeHtml(price)}">`,
    teaser !== null ? `<p class="c402-teaser">${escapeHtml(teaser)}</p>` : "",
    `<a class="c402-unlock" href="${escapeHtml(gateUrl)}" rel="nofollow">Read the rest for $${escapeHtml(price)}</a>`,
    `</div>`,
    // JSON inside <script>: "<" escaped so the text cannot close the element.
    `<script type="application/ld+json">${JSON.stringify(jsonld).replace(/</g, "\\u003c")}</script>`,
  ].join("");
  return { id: c.id, object: "content_snippet", snippet, gate_url: gateUrl, teaser, jsonld, price_usd: price };
}

/** An HTML article as a pass holder gets it: its markup inside `<article class="c402-paid">`. */
function articlePage(c: catalogV1.Checkout, d: ContentDeclaration, html: string): { contentType: string; body: string } {
  const lang = escapeHtml(d.language ?? "en");
  return {
    contentType: "text/html; charset=utf-8",
    body: `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><meta name="robots" content="noindex"><title>${escapeHtml(c.title)}</title></head>
<body><article class="c402-paid">${html}</article></body></html>`,
  };
}

/**
 * An inline article as a reader with a pass gets it: a string body is the
 * article (text or HTML) inside `<article class="c402-paid">`; any other
 * JSON value is answered verbatim as JSON.
 */
export function paidArticle(c: catalogV1.Checkout, d: ContentDeclaration): { contentType: string; body: string | Buffer } {
  const article = jsonOrNull(c.payloadJson);
  if (typeof article !== "string") return { contentType: "application/json", body: c.payloadJson ?? "null" };
  return articlePage(c, d, article);
}

/** A relay article as its origin answered a pass holder: HTML inside `<article class="c402-paid">`, any other type verbatim. */
export function relayedArticle(c: catalogV1.Checkout, d: ContentDeclaration, answer: { contentType?: string | undefined; body: Uint8Array }) {
  const type = answer.contentType ?? "application/octet-stream";
  if (/^text\/html\b/i.test(type)) return articlePage(c, d, Buffer.from(answer.body).toString("utf8"));
  return { contentType: type, body: Buffer.from(answer.body) };
}

/**
 * The Content-Security-Policy of a paid article: the seller's HTML is served
 * from this origin, so it runs sandboxed (no script, an opaque origin: it
 * can never act with a signed-in seller's cookies), and loads images, media
 * and styles only. `frameAncestors` are the origins that may frame it: only
 * those the framing rule accepts are named (@c402/contracts framingOrigins).
 */
export function paidArticlePolicy(frameAncestors: readonly string[]): string {
  const sources = framingOrigins(frameAncestors);
  return [
    "sandbox allow-popups allow-popups-to-escape-sandbox",
    "default-src 'none'",
    "img-src https: data:",
    "media-src https:",
    "style-src 'unsafe-inline' https:",
    "font-src https: data:",
    `frame-ancestors ${sources.length ? sources.join(" ") : "'none'"}`,
  ].join("; ");
}
