import ipaddr from "ipaddr.js";

/** What an IP address is, for the SSRF policy. Only "public" is reachable by default. */
export type AddressClass = "public" | "loopback" | "private" | "link-local" | "metadata" | "cgnat" | "unspecified" | "multicast" | "reserved" | "invalid";

type V4 = ipaddr.IPv4;
type V6 = ipaddr.IPv6;

function table<T extends V4 | V6>(rows: [string, AddressClass][]): [[T, number], AddressClass][] {
  return rows.map(([cidr, cls]) => [ipaddr.parseCIDR(cidr) as [T, number], cls]);
}

// First match wins, so the metadata addresses come before the link-local and CGNAT ranges that contain them.
const V4_TABLE = table<V4>([
  ["0.0.0.0/8", "unspecified"], // "this network": connecting to 0.0.0.0 reaches the local host on Linux
  ["127.0.0.0/8", "loopback"],
  ["10.0.0.0/8", "private"],
  ["172.16.0.0/12", "private"],
  ["192.168.0.0/16", "private"],
  ["169.254.169.254/32", "metadata"], // AWS, GCP, Azure, OCI, DigitalOcean, OpenStack
  ["169.254.169.253/32", "metadata"], // AWS VPC DNS
  ["169.254.169.123/32", "metadata"], // AWS time sync
  ["169.254.170.2/32", "metadata"], // ECS task credentials
  ["169.254.170.23/32", "metadata"], // EKS pod identity agent
  ["100.100.100.200/32", "metadata"], // Alibaba Cloud
  ["192.0.0.192/32", "metadata"], // Oracle Cloud (classic)
  ["169.254.0.0/16", "link-local"],
  ["100.64.0.0/10", "cgnat"],
  ["224.0.0.0/4", "multicast"],
  ["240.0.0.0/4", "reserved"], // includes the limited broadcast 255.255.255.255
  ["192.0.0.0/24", "reserved"], // IETF protocol assignments
  ["192.0.2.0/24", "reserved"], // TEST-NET-1
  ["198.51.100.0/24", "reserved"], // TEST-NET-2
  ["203.0.113.0/24", "reserved"], // TEST-NET-3
  ["198.18.0.0/15", "reserved"], // benchmarking
  ["192.88.99.0/24", "reserved"], // deprecated 6to4 relay anycast
]);

// Ranges whose meaning does not depend on an embedded IPv4 address (those are handled in classifyV6).
const V6_TABLE = table<V6>([
  ["fd00:ec2::254/128", "metadata"], // AWS IMDS over IPv6
  ["fd00:ec2::253/128", "metadata"], // AWS VPC DNS
  ["fd00:ec2::123/128", "metadata"], // AWS time sync
  ["fd20:ce::254/128", "metadata"], // GCE metadata over IPv6
  ["fc00::/7", "private"], // unique local
  ["fe80::/10", "link-local"],
  ["fec0::/10", "private"], // deprecated site-local: still routed inside some networks
  ["ff00::/8", "multicast"],
  ["100::/64", "reserved"], // discard-only
  ["64:ff9b:1::/48", "private"], // local-use NAT64 (RFC 8215): translates into the operator's own network
  ["2001:db8::/32", "reserved"], // documentation
  ["3fff::/20", "reserved"], // documentation (RFC 9637)
  ["5f00::/16", "reserved"], // SRv6 SIDs
  // Globally reachable exceptions inside 2001::/23 (IANA special-purpose registry).
  ["2001:1::1/128", "public"],
  ["2001:1::2/128", "public"],
  ["2001:1::3/128", "public"],
  ["2001:3::/32", "public"],
  ["2001:4:112::/48", "public"],
  ["2001:20::/28", "public"],
  ["2001:30::/28", "public"],
  ["2001::/23", "reserved"], // IETF protocol assignments (benchmarking, ORCHID, ...); Teredo is decided before this row
  ["2000::/3", "public"], // the only allocated global unicast space
]);

function lookup<T extends V4 | V6>(addr: T, rows: [[T, number], AddressClass][]): AddressClass | undefined {
  for (const [range, cls] of rows) if (addr.match(range)) return cls;
  return undefined;
}

/**
 * Parses an IPv4 address the way WHATWG URL and inet_aton do: 1 to 4 dot-separated parts, each
 * decimal, octal (leading 0) or hex (0x), the last part filling the remaining bytes, one trailing
 * dot allowed. Returns the 32-bit value or null. Permissive on purpose: anything a resolver or URL
 * parser could read as an address must be classified as that address.
 */
export function parseIPv4Loose(s: string): number | null {
  const parts = s.split(".");
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop();
  if (parts.length === 0 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const part of parts) {
    const n = parseIPv4Number(part);
    if (n === null) return null;
    nums.push(n);
  }
  const last = nums.pop()!;
  if (nums.some((n) => n > 255)) return null;
  if (last >= 256 ** (4 - nums.length)) return null;
  return nums.reduce((acc, n, i) => acc + n * 256 ** (3 - i), last);
}

function parseIPv4Number(part: string): number | null {
  let radix = 10;
  let digits = part;
  if (/^0x/i.test(part)) {
    radix = 16;
    digits = part.slice(2);
    if (digits === "") return 0; // WHATWG reads "0x" as zero
  } else if (part.length > 1 && part.startsWith("0")) {
    radix = 8;
    digits = part.slice(1);
  }
  const valid = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!valid.test(digits)) return null;
  const n = parseInt(digits, radix);
  return Number.isSafeInteger(n) ? n : null;
}

function v4FromNumber(n: number): V4 {
  return new ipaddr.IPv4([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
}

function classifyV4(addr: V4): AddressClass {
  return lookup(addr, V4_TABLE) ?? "public";
}

function embedded(hi: number, lo: number): AddressClass {
  return classifyV4(v4FromNumber(((hi << 16) | lo) >>> 0));
}

function classifyV6(addr: V6): AddressClass {
  const p = addr.parts as [number, number, number, number, number, number, number, number];
  const zeros = (n: number) => p.slice(0, n).every((x) => x === 0);
  if (zeros(8)) return "unspecified";
  if (zeros(7) && p[7] === 1) return "loopback";
  // IPv4-mapped ::ffff:a.b.c.d: the kernel connects to the IPv4 address itself.
  if (zeros(5) && p[5] === 0xffff) return embedded(p[6], p[7]);
  // Deprecated forms that nobody serves public content on: the embedded class when it is not
  // public (so ::127.0.0.1 reports loopback), otherwise reserved.
  if ((zeros(4) && p[4] === 0xffff && p[5] === 0) || zeros(6)) return nonPublicOr(embedded(p[6], p[7]), "reserved");
  // NAT64 well-known prefix: the gateway connects to the embedded IPv4 address.
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) return embedded(p[6], p[7]);
  // 6to4: the embedded IPv4 address is the tunnel endpoint.
  if (p[0] === 0x2002) return embedded(p[1], p[2]);
  // Teredo: server address in clear, client address inverted. Never a legitimate origin.
  if (p[0] === 0x2001 && p[1] === 0) return nonPublicOr(embedded(~p[6] & 0xffff, ~p[7] & 0xffff), nonPublicOr(embedded(p[2], p[3]), "reserved"));
  return lookup(addr, V6_TABLE) ?? "reserved";
}

function nonPublicOr(cls: AddressClass, otherwise: AddressClass): AddressClass {
  return cls === "public" ? otherwise : cls;
}

const OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
const STRICT_DOTTED = new RegExp(`^${OCTET}(\\.${OCTET}){3}$`);

/** Parses an IP address string (any IPv4 encoding; IPv6 with optional brackets and zone id). */
export function parseAddress(ip: string): V4 | V6 | null {
  let s = ip;
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  if (s.includes(":")) {
    const zone = s.indexOf("%");
    if (zone >= 0) s = s.slice(0, zone); // the zone only picks an interface; the address decides the class
    // An embedded IPv4 tail must be plain dotted decimal (as in WHATWG URL and inet_pton): ipaddr.js
    // would read ::ffff:0177.0.0.1 as 177.0.0.1, while other parsers refuse or read it as octal.
    const tail = s.slice(s.lastIndexOf(":") + 1);
    if (tail.includes(".") && !STRICT_DOTTED.test(tail)) return null;
    return ipaddr.IPv6.isValid(s) ? ipaddr.IPv6.parse(s) : null;
  }
  const n = parseIPv4Loose(s);
  return n === null ? null : v4FromNumber(n);
}

/** Classifies an IP address string. Pure. Anything that does not parse is "invalid". */
export function classifyAddress(ip: string): AddressClass {
  const addr = parseAddress(ip);
  if (addr === null) return "invalid";
  return addr.kind() === "ipv4" ? classifyV4(addr as V4) : classifyV6(addr as V6);
}
