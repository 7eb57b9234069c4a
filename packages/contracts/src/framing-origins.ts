import { LOOPBACK_HOSTS } from "./web-origins";

/**
 * The one rule for an origin that may reach `Content-Security-Policy:
 * frame-ancestors`: an account's embed origins (identity) and a gated
 * article's canonical URL (catalog) both name origins that may frame a page,
 * and the gateway drops anything else before it builds the header. An origin
 * there names one site: a wildcard (`https://*`, `https://*.example.com`)
 * would let any site, or any subdomain of one, frame the page, so none is
 * accepted, however written (`%2A` too: the host is read parsed). It is
 * https, or plain http on localhost or a loopback address (a developer's
 * machine); it carries no credentials; and its host is made of letters,
 * digits, hyphens and dots (a punycoded name or an IPv4 address), so nothing
 * in it can be read as another source or directive of the policy.
 */

/** A host a `frame-ancestors` source can name one by one: labels of letters, digits and hyphens. */
const SOURCE_HOST = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?$/;

/** Why the URL's origin may not frame a page, or undefined when it may. A path, query or fragment is no part of the origin: callers that want an origin only say so. */
export function framingOriginRefusal(url: URL): string | undefined {
  if (url.hostname.includes("*")) return "must name one site: wildcards are refused";
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname))) {
    return "must be https; plain http only on localhost or a loopback address";
  }
  if (url.username !== "" || url.password !== "") return "must not carry credentials";
  if (!LOOPBACK_HOSTS.has(url.hostname) && !SOURCE_HOST.test(url.hostname)) return "must name its host in letters, digits, hyphens and dots";
  return undefined;
}

/** The origin of `value` (`new URL().origin`) when it may frame a page; undefined for a value that is no URL or that the rule refuses. */
export function framingOriginOf(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  return framingOriginRefusal(url) === undefined ? url.origin : undefined;
}

/** The origins of the values that may frame a page, each once, in order: what a `frame-ancestors` header may name. */
export function framingOrigins(values: readonly (string | null | undefined)[]): string[] {
  const origins: string[] = [];
  for (const value of values) {
    const origin = value ? framingOriginOf(value) : undefined;
    if (origin !== undefined && !origins.includes(origin)) origins.push(origin);
  }
  return origins;
}
