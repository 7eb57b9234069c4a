/**
 * The one HTTP client for URLs users supply (relay origins, MCP servers, webhook receivers).
 * See README.md for the policy: what is blocked, why the check is at connect time, redirect rules.
 */
export { classifyAddress, parseIPv4Loose, type AddressClass } from "./address-class";
export { classifyHost, type HostClass } from "./host-class";
export { CROSS_ORIGIN_SAFE_HEADERS, isClassAllowed, MAX_REDIRECTS_CAP, type OutboundPolicy, type Resolver, type ResolvedAddress } from "./policy";
export { OutboundRefused, type RefusalReason } from "./errors";
export { createGuardedFetch, type GuardedFetch } from "./guarded-fetch";
export { guardedRequest, type GuardedRequestOptions, type GuardedResult } from "./guarded-request";
export { NOT_CALLED_REASON, outboundPolicyOf, outboundSettingsOf, outboundSettingsSpec, type OutboundSettings } from "./settings";
