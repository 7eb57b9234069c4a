import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { isAnyId } from "@c402/ids";
import { invalid, type FieldError } from "@c402/problems";

/**
 * Keyset pagination, one convention for every list endpoint: `limit`
 * (default 50, at most 200, as the spec's account-events page) and an opaque
 * `cursor` naming the last item of the previous page by (created_at, id), the
 * order every list is sorted in (newest first). The answer carries
 * `has_more` and `next_cursor` (null on the last page).
 *
 * A route reads the query with `pageRequestOf`, asks its service with
 * `servicePage` and answers with `pageOf(..., createdAtKey)`.
 */
export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 200;

export interface PageAfter {
  /** created_at of the last item already seen. */
  createdAt: Date;
  id: string;
}

export interface PageRequest {
  limit: number;
  after?: PageAfter;
}

const CURSOR = /^[A-Za-z0-9_-]{8,200}$/;

export function encodeCursor(after: PageAfter): string {
  return Buffer.from(JSON.stringify([after.createdAt.toISOString(), after.id]), "utf8").toString("base64url");
}

function decodeCursor(cursor: string): PageAfter | undefined {
  if (!CURSOR.test(cursor)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== "string" || typeof value[1] !== "string") return undefined;
    const createdAt = new Date(value[0]);
    if (Number.isNaN(createdAt.getTime()) || !isAnyId(value[1])) return undefined;
    return { createdAt, id: value[1] };
  } catch {
    return undefined;
  }
}

/** Reads `limit` (default 50, 1 to 200) from a query; a malformed one is added to `errors` (and the default answered). */
export function pageLimitOf(query: Record<string, unknown>, errors: FieldError[]): number {
  if (query.limit === undefined) return PAGE_LIMIT_DEFAULT;
  const raw = query.limit;
  if (typeof raw !== "string" || !/^[0-9]{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > PAGE_LIMIT_MAX) {
    errors.push({ field: "limit", reason: `must be an integer from 1 to ${PAGE_LIMIT_MAX}` });
    return PAGE_LIMIT_DEFAULT;
  }
  return Number(raw);
}

/** Reads `limit` and `cursor` from a query; 422 naming the parameter when either is malformed. */
export function pageRequestOf(query: Record<string, unknown>): PageRequest {
  const errors: FieldError[] = [];
  const limit = pageLimitOf(query, errors);
  let after: PageAfter | undefined;
  if (query.cursor !== undefined) {
    after = typeof query.cursor === "string" ? decodeCursor(query.cursor) : undefined;
    if (!after) errors.push({ field: "cursor", reason: "must be a next_cursor value from a previous page" });
  }
  if (errors.length) throw invalid(errors, "Invalid pagination parameters.");
  return after ? { limit, after } : { limit };
}

/**
 * The page's envelope: the caller asked its service for `limit + 1` items, so
 * one extra means there is more, and the last item kept is the next cursor.
 */
export function pageOf<T>(items: readonly T[], limit: number, keyOf: (item: T) => PageAfter): { items: T[]; has_more: boolean; next_cursor: string | null } {
  const page = items.slice(0, limit);
  const hasMore = items.length > limit;
  const last = page[page.length - 1];
  return { items: page, has_more: hasMore, next_cursor: hasMore && last !== undefined ? encodeCursor(keyOf(last)) : null };
}

/** The page fields of a service's list request: one item more than shown, to learn whether more exist. */
export function servicePage(page: PageRequest): { pageSize: number; after?: { createdAt: Timestamp; id: string } } {
  return {
    pageSize: page.limit + 1,
    ...(page.after ? { after: { createdAt: timestampFromDate(page.after.createdAt), id: page.after.id } } : {}),
  };
}

/** The sort key of a listed message (every listed resource has an id and a created_at). */
export function createdAtKey(item: { id: string; createdAt?: Timestamp }): PageAfter {
  if (!item.createdAt) throw new Error(`listed item ${item.id} has no created_at`);
  return { createdAt: timestampDate(item.createdAt), id: item.id };
}
