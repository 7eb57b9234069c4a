/**
 * A gated article's declaration (the spec's `content` object) as it travels
 * in catalog.v1.Checkout.content_json: normalized by catalog, every field
 * present and the defaults filled in. Its bounds are here too, so the
 * gateway's request schema and catalog's rules read the same numbers.
 */
export interface ContentDeclaration {
  /** The free part; null: the description, then the opening of the body stand in. */
  teaser: string | null;
  author: string | null;
  /** ISO 8601 date or date-time, as sent. */
  published: string | null;
  canonical_url: string | null;
  keywords: string[];
  section: string | null;
  language: string | null;
  license_url: string | null;
  /** `seller`: a pass opens every article of the account; `content`: this one only. */
  pass_scope: "seller" | "content";
  /** Lifetime of the pass a purchase answers. */
  pass_hours: number;
}

export const CONTENT_LIMITS = {
  teaserMax: 2_000,
  /** author and section. */
  textMax: 200,
  publishedMax: 40,
  languageMax: 35,
  urlMax: 2_048,
  keywordsMax: 20,
  keywordMax: 64,
  passHoursDefault: 24,
  passHoursMax: 8_760,
} as const;
