import type { FieldError } from "@c402/problems";

export const ORIGIN_URL_MAX = 2048;

/**
 * What an origin URL (a relay endpoint, an MCP server) may be: an absolute
 * http or https URL without credentials in it (they go in origin keys, where
 * they are sealed). Where it points is judged when it is called, by the
 * outbound guard, since DNS can change.
 */
export function originUrlErrors(raw: string, field: string): FieldError[] {
  if (raw.length === 0) return [{ field, reason: "is required" }];
  if (raw.length > ORIGIN_URL_MAX) return [{ field, reason: `must be at most ${ORIGIN_URL_MAX} characters` }];
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return [{ field, reason: "must be an absolute http or https URL" }];
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return [{ field, reason: "must be an absolute http or https URL" }];
  if (url.username || url.password) return [{ field, reason: "must not carry credentials (store them as an origin key)" }];
  return [];
}
