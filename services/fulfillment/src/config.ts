import { env } from "@c402/config";

export const fulfillmentConfigSpec = {
  secretsKeyring: env.string(
    "SECRETS_KEYRING",
    "master keys that seal stored credentials (id:base64 of 32 bytes, comma-separated; the first seals, all open)",
    {
      secret: true,
    },
  ),
  outboundAllowLoopback: env.bool(
    "OUTBOUND_ALLOW_LOOPBACK",
    "let calls to sellers' origins and MCP servers reach loopback addresses (a developer's machine; never in a cluster)",
    { default: false },
  ),
  outboundResolveNames: env.bool(
    "OUTBOUND_RESOLVE_NAMES",
    "look up the names in sellers' URLs in DNS (false: only IP-literal URLs can be called; for sealed test environments)",
    { default: true },
  ),
  outboundAllowAddresses: env.list(
    "OUTBOUND_ALLOW_ADDRESSES",
    "addresses or CIDRs of private origins sellers may call (comma-separated; metadata and unspecified addresses are never allowed)",
    { default: [] },
  ),
};
