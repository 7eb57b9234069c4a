import { classifyAddress, type AddressClass } from "./address-class";

/** A URL host's class: an address class when the host alone decides it, or "name" (needs DNS). */
export type HostClass = AddressClass | "name";

// Names that cloud metadata services answer on, whatever DNS says.
const METADATA_NAMES = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

// Suffixes that are never delegated in public DNS, so a name under them can only resolve inside
// some private network: `.internal` (ICANN, 2024), `.local` (mDNS), `.home.arpa` (RFC 8375),
// `.localdomain`, and the ICANN-deferred collision names.
const PRIVATE_SUFFIXES = ["internal", "local", "localdomain", "home.arpa", "lan", "intranet", "corp", "home", "private"];

// Characters that would end or change the authority if we pasted the host into a URL.
const DELIMITERS = /[/\\?#@\s]/;

/**
 * Classifies a URL host. Pure. IP literals in every encoding WHATWG URL (and so undici) accepts are
 * read as the address they denote: decimal 2130706433, octal 0177.0.0.1, hex 0x7f.1, short forms
 * 127.1, percent-encoded or full-width digits, trailing dots, bracketed IPv6, IPv6 with a zone id.
 * Names that can only mean a local or metadata host are classified without DNS (`localhost` and
 * `*.localhost` are loopback by RFC 6761; single-label names and names under non-public suffixes
 * are private). Everything else is "name": the connection guard checks what it resolves to.
 */
export function classifyHost(hostname: string): HostClass {
  if (hostname === "") return "invalid";
  const unbracketed = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  if (unbracketed.includes(":")) return classifyAddress(unbracketed); // IPv6 (URL rejects zone ids; a resolver does not)
  if (DELIMITERS.test(hostname)) return "invalid";
  let canonical: string;
  try {
    // The URL parser is the reference: undici connects to exactly this hostname.
    const u = new URL(`http://${hostname}/`);
    if (u.username !== "" || u.password !== "" || u.port !== "" || u.pathname !== "/") return "invalid";
    canonical = u.hostname;
  } catch {
    return "invalid";
  }
  if (/^\d+\.\d+\.\d+\.\d+$/.test(canonical)) return classifyAddress(canonical);
  if (canonical.startsWith("[")) return classifyAddress(canonical);
  return classifyName(canonical.replace(/\.+$/, ""));
}

function classifyName(name: string): HostClass {
  if (name === "") return "invalid";
  if (name === "localhost" || name.endsWith(".localhost")) return "loopback";
  if (METADATA_NAMES.has(name)) return "metadata";
  // A dotless name is completed from the resolver's search list: an internal host by construction.
  if (!name.includes(".")) return "private";
  if (PRIVATE_SUFFIXES.some((s) => name === s || name.endsWith(`.${s}`))) return "private";
  return "name";
}
