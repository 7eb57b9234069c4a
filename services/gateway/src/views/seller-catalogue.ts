import { catalogV1 } from "@c402/contracts";
import { breakdown, formatUsd } from "@c402/money";
import type { CatalogueOffer, SellerCatalogue } from "../catalogue/seller-catalogue";
import { faceUrls } from "./checkouts";
import { cspHash, escapeHtml } from "./html";
import { profileView } from "./profile";
import { isoOrNull } from "./values";

/**
 * The faces of a seller's public catalogue, rendered from one
 * SellerCatalogue: the JSON (/v1/sellers/{slug}/offers, and /u/{slug} for
 * clients), the page (/schedule/{slug}, and /u/{slug} for browsers) and the
 * embeddable fragment (/v1/sellers/{slug}/embed).
 * The HTML escapes every value, loads nothing (no script, image, font or
 * stylesheet from anywhere) and links only the checkouts' faces and the
 * seller's own http(s) links.
 */

/** Where a catalogue lives, in each of its forms. */
export function catalogueLinks(baseUrl: string, slug: string) {
  return {
    offers: `${baseUrl}/v1/sellers/${slug}/offers`,
    page: `${baseUrl}/schedule/${slug}`,
    embed: `${baseUrl}/v1/sellers/${slug}/embed`,
    profile: `${baseUrl}/u/${slug}`,
  };
}

/** A relay or mcp checkout's call URL under its seller's handle (faces/call-urls.ts). */
export const callUrl = (baseUrl: string, slug: string, checkoutId: string) => `${baseUrl}/r/${slug}/${checkoutId}`;
const sellsCalls = (c: CatalogueOffer["checkout"]) => c.fulfillment === catalogV1.Fulfillment.RELAY || c.fulfillment === catalogV1.Fulfillment.MCP;

/** The profile's public fields: what the seller chose to show, and whether the operators verified it (no account id, no dates). */
function sellerView(c: SellerCatalogue) {
  const p = profileView(c.profile);
  return {
    slug: c.slug,
    name: p.name,
    profile_type: p.profile_type,
    bio: p.bio,
    avatar_url: p.avatar_url,
    website_url: p.website_url,
    social_links: p.social_links,
    verified: p.verified,
  };
}

/** One offer as the catalogue shows it: what it is, what the buyer pays (fee on top), where to buy or rehearse. */
function offerView({ checkout: c, claims }: CatalogueOffer, baseUrl: string, slug: string) {
  const price = breakdown(c.priceAtomic);
  return {
    id: c.id,
    object: "offer",
    title: c.title,
    description: c.description ?? null,
    price_usd: formatUsd(price.price),
    fee_usd: formatUsd(price.feeAmount),
    total_usd: formatUsd(price.total),
    currency: "USDC",
    calls_included: c.package?.calls ?? null,
    reusable: c.reusable,
    ...faceUrls(baseUrl, c.id),
    call_url: sellsCalls(c) ? callUrl(baseUrl, slug, c.id) : null,
    created_at: isoOrNull(c.createdAt),
    expires_at: isoOrNull(c.expiresAt),
    freshness: claims?.freshness ?? null,
    coverage: claims?.coverage ?? null,
    source: claims?.source ?? null,
    constraints: claims?.constraints ?? null,
  };
}
type OfferView = ReturnType<typeof offerView>;

/** GET /v1/sellers/{slug}/offers. */
export function catalogueView(c: SellerCatalogue, baseUrl: string) {
  return {
    object: "seller_catalogue",
    seller: sellerView(c),
    offers: c.offers.map((o) => offerView(o, baseUrl, c.slug)),
    has_more: c.hasMore,
    next_cursor: c.nextCursor,
    links: catalogueLinks(baseUrl, c.slug),
  };
}

// ---- HTML -------------------------------------------------------------------

/** A seller's link is shown only when it is http(s) (identity accepts nothing else; this keeps `javascript:` out whatever is stored). */
const isWebLink = (url: string | null): url is string => url !== null && /^https?:\/\//i.test(url);

const displayName = (c: SellerCatalogue) => c.profile.name ?? c.slug;

/** The link to the next page of a catalogue's HTML form, or "" on the last page. */
function nextPageHref(base: string, c: SellerCatalogue): string {
  if (!c.nextCursor) return "";
  const query = new URLSearchParams({ cursor: c.nextCursor, limit: String(c.page.limit) });
  return `${base}?${query.toString()}`;
}

/** One offer's facts, for both HTML forms. */
function priceHtml(o: OfferView): string {
  return `<strong>${escapeHtml(o.total_usd)} USDC</strong> <small>(price ${escapeHtml(o.price_usd)} + fee ${escapeHtml(o.fee_usd)})</small>`;
}

const PAGE_CSS =
  "body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1a1a1a;background:#fafafa}" +
  "main{max-width:44rem;margin:0 auto;padding:1.5rem}" +
  "h1{margin:0 0 .25rem}.handle{color:#555;margin:0}.verified{font-size:.8rem;border:1px solid #2a7;color:#2a7;border-radius:1rem;padding:0 .5rem;margin-left:.5rem;vertical-align:middle}" +
  ".offer{background:#fff;border:1px solid #ddd;border-radius:.5rem;padding:1rem;margin:1rem 0}.offer h3{margin:0 0 .25rem}" +
  "dl{display:grid;grid-template-columns:max-content 1fr;gap:0 1rem;margin:.5rem 0}dt{color:#555}dd{margin:0}" +
  "footer{color:#555;font-size:.9rem;margin-top:2rem}";

/** Headers of the page: a strict CSP (its own <style> only; nothing loaded, nothing frames it). */
export const CATALOGUE_PAGE_HEADERS: readonly (readonly [string, string])[] = [
  [
    "Content-Security-Policy",
    `default-src 'none'; style-src ${cspHash(PAGE_CSS)}; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  ],
  ["X-Frame-Options", "DENY"],
];

function claimsHtml(o: OfferView): string {
  const claims: [string, string | null][] = [
    ["Freshness", o.freshness],
    ["Coverage", o.coverage],
    ["Source", o.source],
    ["Constraints", o.constraints],
  ];
  const rows = claims.filter((row): row is [string, string] => row[1] !== null);
  return rows.length ? `<dl>${rows.map(([k, v]) => `<dt>${k}</dt><dd>${escapeHtml(v)}</dd>`).join("")}</dl>` : "";
}

/** GET /schedule/{slug}: the catalogue as a page. */
export function cataloguePage(c: SellerCatalogue, baseUrl: string): string {
  const view = catalogueView(c, baseUrl);
  const seller = view.seller;
  const name = escapeHtml(displayName(c));
  const links = [
    ...(isWebLink(seller.website_url) ? [["Website", seller.website_url] as const] : []),
    ...Object.entries(seller.social_links).filter((e): e is [string, string] => isWebLink(e[1])),
  ];
  const offers = view.offers.length
    ? view.offers
        .map(
          (o) => `<article class="offer"><h3><a href="${escapeHtml(o.url)}">${escapeHtml(o.title)}</a></h3>
${o.description ? `<p>${escapeHtml(o.description)}</p>` : ""}<p>${priceHtml(o)}</p>${claimsHtml(o)}
<p><a href="${escapeHtml(o.url)}">Buy</a> · <a href="${escapeHtml(o.test_url)}">Rehearse free</a> (simulated, no funds move)${o.reusable ? "" : " · one sale only"}${
            o.expires_at ? ` · on sale until <time datetime="${escapeHtml(o.expires_at)}">${escapeHtml(o.expires_at)}</time>` : ""
          }</p></article>`,
        )
        .join("\n")
    : "<p>Nothing on sale right now.</p>";
  const next = nextPageHref(view.links.page, c);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${name} — offers</title><style>${PAGE_CSS}</style></head>
<body><main><header><h1>${name}${seller.verified ? '<span class="verified">verified</span>' : ""}</h1><p class="handle">${escapeHtml(c.slug)}</p>
${seller.bio ? `<p>${escapeHtml(seller.bio)}</p>` : ""}${
    links.length
      ? `<p>${links.map(([label, url]) => `<a href="${escapeHtml(url)}" rel="nofollow ugc noopener noreferrer">${escapeHtml(label)}</a>`).join(" · ")}</p>`
      : ""
  }</header>
<section><h2>Offers</h2>
${offers}
${next ? `<p><a href="${escapeHtml(next)}" rel="next">Older offers</a></p>` : ""}</section>
<footer><p>Prices are in USDC and include the service fee. Pay any offer with an x402 client at its URL; <a href="${escapeHtml(view.links.offers)}">this catalogue as JSON</a>.</p></footer>
</main></body></html>`;
}

/** The class every rule of the fragment hangs under, from the service name (so it cannot clash with the host page's). */
export function embedClass(serviceName: string): string {
  const ident = serviceName.toLowerCase().replace(/[^a-z0-9-]/g, "");
  return `${/^[a-z]/.test(ident) ? ident : `svc${ident}`}-catalogue`;
}

function embedCss(root: string): string {
  const r = `.${root}`;
  return (
    `${r}{font:14px/1.4 system-ui,sans-serif;color:inherit;border:1px solid #ddd;border-radius:.5rem;padding:.75rem;max-width:100%;box-sizing:border-box}` +
    `${r} ul{list-style:none;margin:0;padding:0}${r} li{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.25rem 1rem;padding:.4rem 0;border-top:1px solid #eee}` +
    `${r} li:first-child{border-top:0}${r} a{color:inherit}${r} .${root}__price{white-space:nowrap;font-weight:600}` +
    `${r} .${root}__seller{margin:0 0 .5rem;font-weight:600}${r} .${root}__more{margin:.5rem 0 0}${r} p{margin:0}`
  );
}

/** Headers of the fragment: framing is what it is for, so only its own <style> is allowed and nothing else loads. */
export function embedHeaders(serviceName: string): [string, string][] {
  return [
    [
      "Content-Security-Policy",
      `default-src 'none'; style-src ${cspHash(embedCss(embedClass(serviceName)))}; img-src 'none'; base-uri 'none'; form-action 'none'`,
    ],
  ];
}

/**
 * GET /v1/sellers/{slug}/embed: the catalogue as a fragment to put inside
 * another page (no <html>, no script): one root element, its <style> scoped
 * under the root's class, links that open the checkouts' faces in a new tab.
 */
export function catalogueEmbed(c: SellerCatalogue, baseUrl: string, serviceName: string): string {
  const view = catalogueView(c, baseUrl);
  const root = embedClass(serviceName);
  const out = 'target="_blank" rel="noopener noreferrer"';
  const items = view.offers
    .map((o) => `<li><a href="${escapeHtml(o.url)}" ${out}>${escapeHtml(o.title)}</a><span class="${root}__price">${escapeHtml(o.total_usd)} USDC</span></li>`)
    .join("");
  const next = nextPageHref(view.links.page, c);
  return `<div class="${root}" data-svc-catalogue="${escapeHtml(c.slug)}"><style>${embedCss(root)}</style>
<p class="${root}__seller"><a href="${escapeHtml(view.links.page)}" ${out}>${escapeHtml(displayName(c))}</a></p>
${items ? `<ul>${items}</ul>` : "<p>Nothing on sale right now.</p>"}${next ? `<p class="${root}__more"><a href="${escapeHtml(next)}" ${out}>More offers</a></p>` : ""}
</div>`;
}
