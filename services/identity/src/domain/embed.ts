import type { Actor } from "@c402/account-events";
import { invalid, ProblemError, type FieldError } from "@c402/problems";
import { embedStore as store } from "../store/embed-store";
import { identityStore, type IdentityDb } from "../store/identity-store";
import { recordActivity } from "./account-events";
import { framingOriginRefusal } from "@c402/contracts";

/**
 * Embed settings (spec, Embedding): the origins allowed to frame the
 * account's pay pages and receipts. Until one is allowlisted nothing may
 * frame them. A PUT replaces the whole list. Each entry is an origin (scheme,
 * host, optional port: no path, query, fragment or credentials): https, or
 * http on localhost / a loopback address (a developer's machine). Wildcards
 * are refused: a `frame-ancestors` source names sites one by one here. The
 * rule an origin follows is the one every framing origin follows
 * (@c402/contracts framingOriginRefusal); an entry is an origin only besides.
 */
export const MAX_EMBED_ORIGINS = 20;
const MAX_ORIGIN_LENGTH = 200;

/** The origin an entry names, normalised (`new URL().origin`), or why it is refused. */
export function embedOriginOf(value: string): { origin: string } | { refusal: string } {
  if (value.length > MAX_ORIGIN_LENGTH) return { refusal: `must be at most ${MAX_ORIGIN_LENGTH} characters` };
  if (value.includes("*")) return { refusal: "must name one origin: wildcards are refused" };
  if (/[\s\p{Cc}]/u.test(value)) return { refusal: "must not contain spaces or control characters" };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { refusal: "must be an origin such as https://shop.example" };
  }
  const refusal = framingOriginRefusal(url);
  if (refusal !== undefined) return { refusal };
  if (url.search !== "" || url.hash !== "" || value.includes("#") || value.includes("?") || url.pathname !== "/") {
    return { refusal: "must be an origin only: scheme, host and port, without a path, query, fragment or credentials" };
  }
  return { origin: url.origin };
}

/** The list as stored (normalised, first occurrence kept), or 422 naming every refused entry. */
export function validateEmbedOrigins(values: readonly string[]): string[] {
  const errors: FieldError[] = [];
  if (values.length > MAX_EMBED_ORIGINS) errors.push({ field: "embed_origins", reason: `may name at most ${MAX_EMBED_ORIGINS} origins` });
  const origins: string[] = [];
  values.forEach((value, i) => {
    const r = embedOriginOf(value);
    if ("refusal" in r) errors.push({ field: `embed_origins[${i}]`, reason: r.refusal });
    else if (!origins.includes(r.origin)) origins.push(r.origin);
  });
  if (errors.length) throw invalid(errors, "The embed origins are not valid.");
  return origins;
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((o, i) => o === b[i]);

export class EmbedSettings {
  constructor(
    private readonly db: IdentityDb,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async get(accountId: string): Promise<string[]> {
    const row = await store.find(this.db, accountId);
    if (row) return row.embed_origins;
    if (!(await identityStore.findAccount(this.db, accountId))) throw new ProblemError("not-found", "No such account.");
    return [];
  }

  /** Replaces the list (a PUT); one `embed.updated` account event when it changed. */
  async put(accountId: string, values: readonly string[], actor: Actor): Promise<{ embedOrigins: string[]; changed: boolean }> {
    const next = validateEmbedOrigins(values);
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      if (!(await identityStore.findAccount(trx, accountId))) throw new ProblemError("not-found", "No such account.");
      const current = (await store.lock(trx, accountId))?.embed_origins ?? [];
      if (sameList(current, next)) return { embedOrigins: current, changed: false };
      await store.upsert(trx, { account_id: accountId, embed_origins: next, updated_at: now });
      await recordActivity(trx, {
        accountId,
        action: "embed.updated",
        objectId: accountId,
        detail: { embed_origins: next, before: current },
        actor,
        testMode: false,
        at: now,
      });
      return { embedOrigins: next, changed: true };
    });
  }
}
