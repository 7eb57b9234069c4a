import type { Actor } from "@c402/account-events";
import { SELLER_SLUG } from "@c402/ids";
import { isUniqueViolation } from "@c402/db";
import { ProblemError, invalid, type FieldError } from "@c402/problems";
import { identityStore as store, type IdentityDb, type ProfileChange, type ProfileRow } from "../store/identity-store";
import { recordActivity } from "./account-events";

/**
 * The seller profile (GET and PATCH /auth/me) and its rules: the spec's
 * (slug pattern, unique, not reserved; name 120, bio 600, URLs 2048;
 * profile_type; social_links replaced wholesale; verified never self-serve)
 * and the choices docs/decisions.md records (the reserved words, URLs are
 * absolute http(s), the bounds of social_links). Lengths count characters
 * (Unicode code points), as JSON Schema's maxLength does.
 */

export const PROFILE_LIMITS = {
  nameMax: 120,
  bioMax: 600,
  urlMax: 2048,
  socialLinksMax: 20,
  socialLinkNameMax: 40,
} as const;

/**
 * Slugs no seller may take: the site's own path segments (a profile lives at
 * /u/<slug> and call URLs at /r/<slug>/..., beside /r/by-tx and the other
 * routes), and words that would pass a seller off as the service or its
 * staff. The faces' single letters are listed too, though the pattern's two
 * characters already keep them out.
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  // The service's own paths and path segments.
  "c",
  "e",
  "x",
  "r",
  "u",
  "v1",
  "v2",
  "api",
  "app",
  "auth",
  "oauth",
  "mcp",
  "x402",
  "docs",
  "doc",
  "llms",
  "openapi",
  "health",
  "static",
  "assets",
  "well-known",
  "pay",
  "by-tx",
  "checkout",
  "checkouts",
  "receipt",
  "receipts",
  "schedule",
  "schedules",
  "series",
  "escrow",
  "content",
  "grants",
  "embed",
  "keys",
  "origin-keys",
  "webhooks",
  "spending-wallets",
  "wallet",
  "wallets",
  "account",
  "accounts",
  "platform",
  "platforms",
  "facilitator",
  "reports",
  "analytics",
  "usage",
  "rehearsal",
  "me",
  "profile",
  "profiles",
  "settings",
  "dashboard",
  "login",
  "logout",
  "signin",
  "sign-in",
  "signup",
  "sign-up",
  "register",
  "join",
  "session",
  "sessions",
  "magic-link",
  "verify",
  "callback",
  "search",
  "explore",
  "home",
  "index",
  "new",
  "www",
  "cdn",
  "mail",
  "email",
  // Words that would mislead: the service itself, its staff, its promises.
  "c402",
  "admin",
  "administrator",
  "root",
  "system",
  "operator",
  "operators",
  "staff",
  "moderator",
  "official",
  "support",
  "help",
  "security",
  "abuse",
  "legal",
  "terms",
  "privacy",
  "status",
  "about",
  "contact",
  "billing",
  "verified",
  "internal",
  "noreply",
  "no-reply",
  "postmaster",
  "webmaster",
  "null",
  "undefined",
]);

export const PROFILE_TYPES = ["individual", "team", "company"] as const;
export type ProfileTypeName = (typeof PROFILE_TYPES)[number];

/** The fields a patch can set to a value or clear (to null). */
export const CLEARABLE_FIELDS = ["slug", "name", "profile_type", "bio", "avatar_url", "website_url"] as const;
export type ClearableField = (typeof CLEARABLE_FIELDS)[number];
/** Every field a patch can change, in the order events name them. */
export type ProfileField = ClearableField | "social_links";
const FIELD_ORDER: readonly ProfileField[] = [...CLEARABLE_FIELDS, "social_links"];

export interface ProfilePatch {
  /** Fields to set to a value (never an empty string: clearing is `clear`). */
  set: Partial<Record<Exclude<ClearableField, "profile_type">, string> & { profile_type: ProfileTypeName }>;
  /** Fields to set to null. */
  clear: readonly string[];
  /** Every link at once, replacing the ones there; `{}` removes them all. */
  socialLinks?: Readonly<Record<string, string>>;
}

const chars = (s: string) => [...s].length;
/** Control characters (C0, DEL, C1); a bio may still carry tabs and line breaks. */
const CONTROL = /\p{Cc}/u;
const CONTROL_BUT_LINES = /(?![\t\n\r])\p{Cc}/u;
/** A social link's name: a network (`github`, `x`, `stack-overflow`). */
const LINK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Why a URL is refused, or undefined: absolute http(s), at most 2048 characters, sent as it should be stored. */
export function urlRefusal(value: string): string | undefined {
  if (chars(value) > PROFILE_LIMITS.urlMax) return `must be at most ${PROFILE_LIMITS.urlMax} characters`;
  if (/[\s\p{Cc}]/u.test(value)) return "must not contain spaces or control characters";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute http:// or https:// URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an absolute http:// or https:// URL";
  if (!url.hostname) return "must name a host";
  if (url.username || url.password) return "must not carry a user name or password";
  return undefined;
}

/** Why a slug is refused, or undefined. Uniqueness is the database's (the unique index), never checked here. */
export function slugRefusal(value: string): string | undefined {
  if (!SELLER_SLUG.test(value)) {
    return "must be 2 to 39 lowercase letters, digits or hyphens, starting with a letter or digit (^[a-z0-9][a-z0-9-]{1,38}$)";
  }
  if (RESERVED_SLUGS.has(value)) return "is a reserved word; choose another";
  return undefined;
}

function textRefusal(value: string, max: number, control: RegExp): string | undefined {
  if (chars(value) > max) return `must be at most ${max} characters`;
  if (control.test(value)) return "must not contain control characters";
  return undefined;
}

function socialLinksRefusals(links: Readonly<Record<string, string>>): FieldError[] {
  const entries = Object.entries(links);
  if (entries.length > PROFILE_LIMITS.socialLinksMax) {
    return [{ field: "social_links", reason: `must have at most ${PROFILE_LIMITS.socialLinksMax} links` }];
  }
  const errors: FieldError[] = [];
  for (const [name, url] of entries) {
    const field = `social_links.${name}`;
    if (chars(name) > PROFILE_LIMITS.socialLinkNameMax || !LINK_NAME.test(name)) {
      errors.push({
        field,
        reason: `the link's name must be 1 to ${PROFILE_LIMITS.socialLinkNameMax} letters, digits, '_', '.' or '-', starting with a letter or digit`,
      });
      continue;
    }
    const refusal = urlRefusal(url);
    if (refusal) errors.push({ field, reason: refusal });
  }
  return errors;
}

/** Every way the patch breaks the profile rules (empty when it is acceptable). */
export function patchRefusals(patch: ProfilePatch): FieldError[] {
  const errors: FieldError[] = [];
  const { set } = patch;
  for (const field of patch.clear) {
    if (!(CLEARABLE_FIELDS as readonly string[]).includes(field)) errors.push({ field, reason: "is not a field that can be cleared" });
    else if (set[field as ClearableField] !== undefined) errors.push({ field, reason: "is both set and cleared" });
  }
  const empty = (Object.entries(set) as [string, string | undefined][]).filter(([, v]) => v === "");
  for (const [field] of empty) errors.push({ field, reason: "is empty: to clear a field, name it in `clear`" });
  const check = (field: ClearableField, refusal: (v: string) => string | undefined) => {
    const value = set[field];
    if (value === undefined || value === "") return;
    const reason = refusal(value);
    if (reason) errors.push({ field, reason });
  };
  check("slug", slugRefusal);
  check("name", (v) => textRefusal(v, PROFILE_LIMITS.nameMax, CONTROL));
  check("profile_type", (v) => ((PROFILE_TYPES as readonly string[]).includes(v) ? undefined : `must be one of ${PROFILE_TYPES.join(", ")}`));
  check("bio", (v) => textRefusal(v, PROFILE_LIMITS.bioMax, CONTROL_BUT_LINES));
  check("avatar_url", urlRefusal);
  check("website_url", urlRefusal);
  if (patch.socialLinks !== undefined) errors.push(...socialLinksRefusals(patch.socialLinks));
  return errors;
}

const sameLinks = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) => {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && b[k] === a[k]);
};

/** What the patch changes on `current`: the new values and the names of the fields that change (in FIELD_ORDER). */
export function changesOf(current: ProfileRow, patch: ProfilePatch): { values: Omit<ProfileChange, "updated_at">; changed: ProfileField[] } {
  const values: Omit<ProfileChange, "updated_at"> = {};
  for (const field of CLEARABLE_FIELDS) {
    const next = patch.clear.includes(field) ? null : patch.set[field];
    if (next !== undefined && next !== current[field]) values[field] = next;
  }
  if (patch.socialLinks !== undefined && !sameLinks(current.social_links, patch.socialLinks)) values.social_links = { ...patch.socialLinks };
  return { values, changed: FIELD_ORDER.filter((f) => f in values) };
}

/** The profile of an account that never changed it: every field null, no links, not verified, dated like the account. */
function emptyProfile(accountId: string, createdAt: Date): ProfileRow {
  return {
    account_id: accountId,
    slug: null,
    name: null,
    profile_type: null,
    bio: null,
    avatar_url: null,
    website_url: null,
    social_links: {},
    verified: false,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

const noSuchAccount = () => new ProblemError("not-found", "No such account.");

export class Profiles {
  constructor(
    private readonly db: IdentityDb,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async get(accountId: string): Promise<ProfileRow> {
    const row = await store.findProfile(this.db, accountId);
    if (row) return row;
    const account = await store.findAccount(this.db, accountId);
    if (!account) throw noSuchAccount();
    return emptyProfile(accountId, account.created_at);
  }

  /**
   * The profile that holds a public slug (the seller's public catalogue). A
   * text that cannot be a slug, reserved words included, is not looked up:
   * no account can hold it.
   */
  async bySlug(slug: string): Promise<ProfileRow> {
    const row = slugRefusal(slug) === undefined ? await store.findProfileBySlug(this.db, slug) : undefined;
    if (!row) throw new ProblemError("not-found", "No seller has this slug.");
    return row;
  }

  /**
   * Applies a patch and answers the whole profile and the fields that changed.
   * A change records one `profile.updated` event (the changed fields' names,
   * and the new slug when it changed) in its own transaction; a patch that
   * changes nothing writes nothing. A slug another account holds is 409,
   * decided by the unique index, so two accounts asking for one slug at once
   * cannot both get it.
   */
  async update(accountId: string, patch: ProfilePatch, actor: Actor): Promise<{ profile: ProfileRow; changed: ProfileField[] }> {
    const errors = patchRefusals(patch);
    if (errors.length) throw invalid(errors, "The profile change is not valid.");
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      await store.ensureProfile(trx, accountId);
      const current = await store.lockProfile(trx, accountId);
      if (!current) throw noSuchAccount();
      const { values, changed } = changesOf(current, patch);
      if (changed.length === 0) return { profile: current, changed };
      let profile: ProfileRow;
      try {
        profile = await store.updateProfile(trx, accountId, { ...values, updated_at: now });
      } catch (err) {
        // On a profile update, only the slug's index can raise it.
        if (!isUniqueViolation(err)) throw err;
        throw new ProblemError("conflict", {
          message: `The slug ${values.slug ?? ""} is taken by another account.`,
          help: { fix: "Choose another slug.", retry_is_safe: false },
          errors: [{ field: "slug", reason: "is taken" }],
        });
      }
      await recordActivity(trx, {
        accountId,
        action: "profile.updated",
        objectId: accountId,
        detail: { fields: changed, ...(changed.includes("slug") ? { slug: profile.slug } : {}) },
        actor,
        testMode: false,
        at: now,
      });
      return { profile, changed };
    });
  }
}
