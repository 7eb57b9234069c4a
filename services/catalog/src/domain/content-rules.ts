import { CONTENT_LIMITS, framingOriginRefusal, type ContentDeclaration } from "@c402/contracts";
import type { FieldError } from "@c402/problems";

/**
 * A gated article's declaration (the spec's `content` object), checked and
 * normalized: every field present, the defaults filled in, so what a seller
 * reads back is what the faces act on. Limits the spec leaves open are in
 * docs/decisions.md "Gated content"; the bounds are shared with the gateway's
 * request schema (@c402/contracts CONTENT_LIMITS).
 */
export type { ContentDeclaration };

const TEXT_FIELDS = ["author", "section"] as const;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;
/** A BCP 47 language tag's common shape (language, then up to three subtags). */
const LANGUAGE_TAG = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8}){0,3}$/;
const KNOWN_FIELDS = new Set<string>([
  "teaser",
  "author",
  "published",
  "canonical_url",
  "keywords",
  "section",
  "language",
  "license_url",
  "pass_scope",
  "pass_hours",
]);

/**
 * Why a URL is refused, or undefined. The canonical URL's origin may frame
 * the article (`frame-ancestors`), so it follows the embed allowlist's rule
 * (@c402/contracts framingOriginRefusal: one site, no wildcard; https, or
 * http on loopback; no credentials); a license URL is any http(s) URL.
 */
function urlRefusal(value: string, framing: boolean): string | undefined {
  if (value.length > CONTENT_LIMITS.urlMax) return `must be at most ${CONTENT_LIMITS.urlMax} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute URL";
  }
  if (framing) {
    const refusal = framingOriginRefusal(url);
    return refusal === undefined ? undefined : `${refusal} (its origin may frame the article)`;
  }
  if (url.username || url.password) return "must not carry credentials";
  return url.protocol === "https:" || url.protocol === "http:" ? undefined : "must be an http(s) URL";
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The declaration from its JSON text, normalized; every refusal is pushed as `content.<field>`. */
export function contentDeclarationOf(json: string, errors: FieldError[]): ContentDeclaration | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    errors.push({ field: "content", reason: "must be an object" });
    return null;
  }
  if (!isPlainObject(value)) {
    errors.push({ field: "content", reason: "must be an object (the article's declaration)" });
    return null;
  }
  const before = errors.length;
  const refuse = (name: string, reason: string) => errors.push({ field: `content.${name}`, reason });
  const out: ContentDeclaration = {
    teaser: null,
    author: null,
    published: null,
    canonical_url: null,
    keywords: [],
    section: null,
    language: null,
    license_url: null,
    pass_scope: "seller",
    pass_hours: CONTENT_LIMITS.passHoursDefault,
  };
  for (const name of Object.keys(value)) if (!KNOWN_FIELDS.has(name)) refuse(name.slice(0, 100), "is not a field of the content declaration");

  const str = (name: string, max: number): string | null => {
    const v = value[name];
    if (v === undefined || v === null) return null;
    if (typeof v !== "string") return (refuse(name, "must be a string"), null);
    if (v.length > max) return (refuse(name, `must be at most ${max} characters`), null);
    return v;
  };
  out.teaser = str("teaser", CONTENT_LIMITS.teaserMax);
  for (const name of TEXT_FIELDS) out[name] = str(name, CONTENT_LIMITS.textMax);

  const published = str("published", CONTENT_LIMITS.publishedMax);
  if (published !== null && (!ISO_DATE.test(published) || Number.isNaN(Date.parse(published)))) refuse("published", "must be an ISO 8601 date or date-time");
  else out.published = published;

  const language = str("language", CONTENT_LIMITS.languageMax);
  if (language !== null && !LANGUAGE_TAG.test(language)) refuse("language", "must be a BCP 47 language tag, like en or pt-BR");
  else out.language = language;

  for (const [name, framing] of [
    ["canonical_url", true],
    ["license_url", false],
  ] as const) {
    const url = str(name, CONTENT_LIMITS.urlMax);
    const reason = url === null ? undefined : urlRefusal(url, framing);
    if (reason) refuse(name, reason);
    else out[name] = url;
  }

  const keywords = value.keywords;
  if (keywords !== undefined && keywords !== null) {
    if (!Array.isArray(keywords) || keywords.length > CONTENT_LIMITS.keywordsMax)
      refuse("keywords", `must be an array of at most ${CONTENT_LIMITS.keywordsMax} strings`);
    else if (!keywords.every((k) => typeof k === "string" && k.trim().length > 0 && k.length <= CONTENT_LIMITS.keywordMax)) {
      refuse("keywords", `must hold non-empty strings of at most ${CONTENT_LIMITS.keywordMax} characters`);
    } else out.keywords = keywords as string[];
  }

  const scope = value.pass_scope;
  if (scope !== undefined && scope !== null) {
    if (scope !== "seller" && scope !== "content") refuse("pass_scope", "must be seller or content");
    else out.pass_scope = scope;
  }
  const hours = value.pass_hours;
  if (hours !== undefined && hours !== null) {
    if (typeof hours !== "number" || !Number.isInteger(hours) || hours < 1 || hours > CONTENT_LIMITS.passHoursMax) {
      refuse("pass_hours", `must be an integer from 1 to ${CONTENT_LIMITS.passHoursMax}`);
    } else out.pass_hours = hours;
  }
  return errors.length === before ? out : null;
}

/**
 * What a gated article may be sold as (spec: inline or relay): inline, the
 * article is the payload (a string of text or HTML, or a JSON value served
 * verbatim); relay, the seller's origin answers it for each read. Never a
 * package: a pass, not a key, opens it again.
 */
export function contentSaleRefusals(c: { mode: string; payloadJson: string | null; package: unknown }): FieldError[] {
  const errors: FieldError[] = [];
  if (c.mode !== "inline" && c.mode !== "relay") errors.push({ field: "fulfillment", reason: `must be inline or relay for gated content, not ${c.mode}` });
  else if (c.mode === "inline" && (c.payloadJson === null || c.payloadJson === "null" || c.payloadJson === '""')) {
    errors.push({ field: "payload", reason: "is the article: required for gated content" });
  }
  if (c.package !== null) errors.push({ field: "max_deliveries", reason: "gated content is opened by a pass, not sold as a package" });
  return errors;
}
