import { env } from "@c402/config";
import type { OutboundPolicy } from "./policy";

/** Who the URLs sellers give (relay origins, MCP servers, webhook receivers) may point at, as an operator sets it. */
export interface OutboundSettings {
  /** Loopback destinations: a developer's machine only, never a cluster. */
  allowLoopback: boolean;
  /** Private addresses or CIDRs an operator allows (metadata and unspecified addresses never are). */
  allowAddresses: readonly string[];
  /** false: every name is "not found", so no DNS query leaves the machine (sealed test environments). */
  resolveNames?: boolean;
}

/** The settings every service that calls sellers' URLs reads, written once. */
export const outboundSettingsSpec = {
  outboundAllowLoopback: env.bool(
    "OUTBOUND_ALLOW_LOOPBACK",
    "let calls to URLs sellers give (origins, MCP servers, webhook receivers) reach loopback addresses (a developer's machine; never in a cluster)",
    { default: false },
  ),
  outboundResolveNames: env.bool(
    "OUTBOUND_RESOLVE_NAMES",
    "look up the names in sellers' URLs in DNS (false: only IP-literal URLs can be called; for sealed test environments)",
    { default: true },
  ),
  outboundAllowAddresses: env.list(
    "OUTBOUND_ALLOW_ADDRESSES",
    "addresses or CIDRs of private hosts sellers' URLs may reach (comma-separated; metadata and unspecified addresses are never allowed)",
    { default: [] },
  ),
};

/** The settings as read from a config loaded with `outboundSettingsSpec`. */
export function outboundSettingsOf(config: {
  outboundAllowLoopback: boolean;
  outboundAllowAddresses: readonly string[];
  outboundResolveNames: boolean;
}): OutboundSettings {
  return { allowLoopback: config.outboundAllowLoopback, allowAddresses: config.outboundAllowAddresses, resolveNames: config.outboundResolveNames };
}

/** The guard's policy for the settings, plus what the caller decides itself (timeouts, redirects). */
export function outboundPolicyOf(settings: OutboundSettings, own: Omit<OutboundPolicy, "allowLoopback" | "allowAddresses" | "resolve"> = {}): OutboundPolicy {
  return {
    ...own,
    allowLoopback: settings.allowLoopback,
    allowAddresses: [...settings.allowAddresses],
    // With names off, every name is "not found" (unreachable): no DNS query leaves the machine.
    ...(settings.resolveNames === false ? { resolve: async () => [] } : {}),
  };
}

/** The 422 reason for a URL the outbound guard would never call. */
export const NOT_CALLED_REASON = "points to an address this service does not call (loopback, private, link-local or metadata)";
