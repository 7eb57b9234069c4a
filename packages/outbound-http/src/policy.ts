import ipaddr from "ipaddr.js";
import { classifyAddress, parseAddress } from "./address-class";
import type { HostClass } from "./host-class";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface OutboundPolicy {
  /** Allow loopback destinations (embedded mode on a developer laptop). Default false. */
  allowLoopback?: boolean;
  /** Allow RFC 1918 / unique-local / site-local / CGNAT destinations and private-suffix names. Default false. */
  allowPrivate?: boolean;
  /**
   * Addresses or CIDR ranges allowed although their class is blocked: an operator's whitelisted
   * internal origin, or the test origin on 127.0.0.1. Cannot allow metadata, unspecified,
   * multicast or invalid addresses.
   */
  allowAddresses?: string[];
  /** Redirects followed, 0..5 (larger values are capped at 5). 0 returns a 3xx as-is. Default 5. */
  maxRedirects?: number;
  /** Deadline for the whole exchange, redirects and body included. Default 10 000 ms. */
  timeoutMs?: number;
  /** Largest (decoded) response body. Default 5 MiB. */
  maxResponseBytes?: number;
  /** Resolver for host names. Default: dns.lookup with all: true. Tests inject a stub. */
  resolve?: Resolver;
  /**
   * Headers never carried to another origin. A cross-origin redirect already keeps only Accept,
   * Accept-Encoding, Accept-Language, User-Agent and (while there is a body) Content-Type,
   * Content-Language and Content-Length, so credentials under any name are dropped without this;
   * it matters only for one of those names. Kept for compatibility.
   */
  sensitiveHeaders?: string[];
  /** Trust anchors for https (replaces the default roots, like tls.connect's `ca`). */
  ca?: string | Buffer | Array<string | Buffer>;
}

export const MAX_REDIRECTS_CAP = 5;

export interface ResolvedPolicy {
  allowLoopback: boolean;
  allowPrivate: boolean;
  allowAddresses: [ipaddr.IPv4 | ipaddr.IPv6, number][];
  maxRedirects: number;
  timeoutMs: number;
  maxResponseBytes: number;
  resolve: Resolver | undefined;
  /** The headers a request keeps on a cross-origin hop (lower case): the safe list minus `sensitiveHeaders`. */
  crossOriginHeaders: ReadonlySet<string>;
  ca: OutboundPolicy["ca"];
}

// Never reachable, whatever the policy says: 0.0.0.0/:: reach the local host, metadata hands out credentials.
const NEVER: ReadonlySet<HostClass> = new Set(["invalid", "unspecified", "multicast", "metadata"]);

/**
 * The only headers a request keeps when a redirect takes it to another origin; every other header
 * the caller added (Authorization, Cookie, X-PAYMENT, an API key or token under any name, a
 * session id) stays with the origin it was meant for. The content headers go on only while the
 * request still has a body.
 */
export const CROSS_ORIGIN_SAFE_HEADERS: readonly string[] = [
  "accept",
  "accept-encoding",
  "accept-language",
  "content-language",
  "content-type",
  "content-length",
  "user-agent",
];

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v < 0) throw new Error(`outbound-http: ${name} must be a non-negative number`);
  return v;
}

export function resolvePolicy(policy: OutboundPolicy = {}): ResolvedPolicy {
  const allowAddresses = (policy.allowAddresses ?? []).map((entry) => {
    if (entry.includes("/")) return ipaddr.parseCIDR(entry);
    const addr = parseAddress(entry);
    if (addr === null) throw new Error(`outbound-http: allowAddresses entry is not an address: ${entry}`);
    return [addr, addr.kind() === "ipv4" ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
  });
  const sensitive = new Set((policy.sensitiveHeaders ?? []).map((h) => h.toLowerCase()));
  return {
    allowLoopback: policy.allowLoopback ?? false,
    allowPrivate: policy.allowPrivate ?? false,
    allowAddresses,
    maxRedirects: Math.min(Math.floor(nonNegative("maxRedirects", policy.maxRedirects, MAX_REDIRECTS_CAP)), MAX_REDIRECTS_CAP),
    timeoutMs: nonNegative("timeoutMs", policy.timeoutMs, 10_000),
    maxResponseBytes: Math.floor(nonNegative("maxResponseBytes", policy.maxResponseBytes, 5 * 1024 * 1024)),
    resolve: policy.resolve,
    crossOriginHeaders: new Set(CROSS_ORIGIN_SAFE_HEADERS.filter((h) => !sensitive.has(h))),
    ca: policy.ca,
  };
}

/** Whether a host or address class may be connected to under the policy (allowAddresses aside). Pure. */
export function isClassAllowed(cls: HostClass, policy: Pick<OutboundPolicy, "allowLoopback" | "allowPrivate">): boolean {
  if (cls === "public" || cls === "name") return true;
  if (cls === "loopback") return policy.allowLoopback === true;
  if (cls === "private" || cls === "cgnat") return policy.allowPrivate === true;
  return false;
}

export interface Verdict {
  allowed: boolean;
  addressClass: HostClass;
}

/** The verdict on one IP address, the thing a socket is about to connect to. */
export function addressVerdict(ip: string, policy: ResolvedPolicy): Verdict {
  const addressClass = classifyAddress(ip);
  if (addressClass === "public") return { allowed: true, addressClass };
  if (NEVER.has(addressClass)) return { allowed: false, addressClass };
  if (isClassAllowed(addressClass, policy) || inAllowList(ip, policy)) return { allowed: true, addressClass };
  return { allowed: false, addressClass };
}

function inAllowList(ip: string, policy: ResolvedPolicy): boolean {
  if (policy.allowAddresses.length === 0) return false;
  let addr = parseAddress(ip);
  if (addr === null) return false;
  // ::ffff:127.0.0.1 is 127.0.0.1 as far as the kernel is concerned.
  if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  return policy.allowAddresses.some(([range, bits]) => range.kind() === addr.kind() && addr.match(range, bits));
}
