import { isIP } from "node:net";
import { ConfigError, env, type Setting } from "@c402/config";
import { observabilitySpec, rpcIdentitySpec } from "@c402/runtime";

/**
 * Which proxies may set the client address through X-Forwarded-For (Express's
 * "trust proxy"): nobody (false, the default: the socket's peer is the client),
 * a hop count, or proxy addresses, CIDR ranges and the names `loopback`,
 * `linklocal`, `uniquelocal`.
 */
export type TrustProxy = false | number | string[];

const NAMED_RANGES = new Set(["loopback", "linklocal", "uniquelocal"]);

function isAddressOrRange(value: string): boolean {
  if (NAMED_RANGES.has(value)) return true;
  const [address = "", bits, ...rest] = value.split("/");
  const family = isIP(address);
  if (!family || rest.length) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/** Reads TRUST_PROXY: `none` (or unset), a hop count 1–255, or a comma-separated list of addresses, CIDRs and named ranges. */
export function parseTrustProxy(raw: string): TrustProxy {
  const value = raw.trim();
  if (value === "" || value === "none") return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > 255) throw new Error("as a hop count must be from 1 to 255");
    return hops;
  }
  const entries = value.split(",").map((s) => s.trim());
  const wrong = entries.filter((e) => !isAddressOrRange(e));
  if (wrong.length)
    throw new Error(`must be none, a hop count, or a comma-separated list of IPs, CIDRs, loopback, linklocal, uniquelocal; not ${wrong.join(", ")}`);
  return entries;
}

function trustProxySetting(name: string, describe: string): Setting<TrustProxy> {
  return {
    env: name,
    describe,
    secret: false,
    read(raw) {
      try {
        return parseTrustProxy(raw ?? "");
      } catch (err) {
        throw new ConfigError([`${name} ${(err as Error).message}`]);
      }
    },
  };
}

/** Failed authentications per minute per client address and per key prefix before both are refused (429) for the rest of the minute. */
export const DEFAULT_AUTH_FAILURE_LIMIT_PER_MINUTE = 20;
/** Spending-wallet payments per minute per account and chain (POST /v1/spending-wallets/{chain}/pay and pay_x402). */
export const DEFAULT_SPENDING_PAYS_PER_MINUTE = 30;
/** The spec's default budget of a package key: calls per minute. */
export const DEFAULT_PACKAGE_CALLS_PER_MINUTE = 60;

/** Gateway settings shared by both run modes. */
export const gatewayConfigSpec = {
  host: env.string("HOST", "address the HTTP server binds", { default: "127.0.0.1" }),
  port: env.int("PORT", "HTTP port of the gateway", { default: 4020, min: 0, max: 65535 }),
  baseUrl: env.optionalString("BASE_URL", "public base URL (default http://HOST:PORT)"),
  siteUrl: env.optionalString("SITE_URL", "URL used in problem type URIs and links (default BASE_URL)"),
  serviceName: env.string("SERVICE_NAME", "service name used in /.well-known/<name> and the root map", { default: "c402" }),
  authRateLimitPerMinute: env.int(
    "AUTH_RATE_LIMIT_PER_MINUTE",
    "sign-in requests (wallet; magic link and OAuth registration and consent, each counted apart; the OAuth token endpoint ten times as many) per minute per client address",
    {
      default: 30,
      min: 1,
    },
  ),
  authFailureLimitPerMinute: env.int(
    "AUTH_FAILURE_LIMIT_PER_MINUTE",
    "failed authentications per minute per client address and per key prefix before both are refused (429) until the minute ends",
    { default: DEFAULT_AUTH_FAILURE_LIMIT_PER_MINUTE, min: 1 },
  ),
  packageCallsPerMinute: env.int("PACKAGE_CALLS_PER_MINUTE", "calls per minute one package key may spend (answers carry X-RateLimit-*)", {
    default: DEFAULT_PACKAGE_CALLS_PER_MINUTE,
    min: 1,
  }),
  trustProxy: trustProxySetting(
    "TRUST_PROXY",
    "proxies trusted to name the client in X-Forwarded-For: none (default), a hop count, or a comma-separated list of IPs, CIDRs, loopback",
  ),
};

/** Extra settings of the gateway process in distributed mode. */
export const gatewayDistributedSpec = {
  redisUrl: env.string("REDIS_URL", "Redis URL for caches and rate limits", { secret: true }),
  identityAddress: env.string("IDENTITY_GRPC_ADDRESS", "host:port of identity"),
  contentGrantsAddress: env.string("CONTENT_GRANTS_GRPC_ADDRESS", "host:port of content-grants"),
  catalogAddress: env.string("CATALOG_GRPC_ADDRESS", "host:port of catalog"),
  paymentsAddress: env.string("PAYMENTS_GRPC_ADDRESS", "host:port of payments"),
  fulfillmentAddress: env.string("FULFILLMENT_GRPC_ADDRESS", "host:port of fulfillment"),
  webhooksAddress: env.string("WEBHOOKS_GRPC_ADDRESS", "host:port of webhooks"),
  escrowAddress: env.string("ESCROW_GRPC_ADDRESS", "host:port of escrow"),
  schedulesAddress: env.string("SCHEDULES_GRPC_ADDRESS", "host:port of schedules"),
  spendingWalletsAddress: env.string("SPENDING_WALLETS_GRPC_ADDRESS", "host:port of spending-wallets"),
  logLevel: env.oneOf("LOG_LEVEL", "log level", ["fatal", "error", "warn", "info", "debug", "trace"] as const, { default: "info" }),
  devchainUrl: env.optionalString("DEVCHAIN_URL", "local EVM chain URL to show in the deep health report (local runs only)"),
  solanaDevnetUrl: env.optionalString("SOLANA_DEVNET_URL", "local Solana devnet URL to show in the deep health report (local runs only)"),
  stellarStandinUrl: env.optionalString("STELLAR_STANDIN_URL", "local Stellar stand-in URL to show in the deep health report (local runs only)"),
  stellarStandinCaFile: env.optionalString(
    "STELLAR_STANDIN_CA_FILE",
    "file of the local Stellar stand-in's certificate authority, shown with its URL (local runs only)",
  ),
  ...observabilitySpec,
  rpcToken: rpcIdentitySpec.rpcToken,
};

export interface GatewaySettings {
  baseUrl: string;
  siteUrl: string;
  serviceName: string;
  version: string;
  runMode: "embedded" | "distributed";
  authRateLimitPerMinute: number;
  /** Default DEFAULT_AUTH_FAILURE_LIMIT_PER_MINUTE. */
  authFailureLimitPerMinute?: number;
  /** Default DEFAULT_PACKAGE_CALLS_PER_MINUTE. */
  packageCallsPerMinute?: number;
  /** Default DEFAULT_SPENDING_PAYS_PER_MINUTE. */
  spendingPaysPerMinute?: number;
  /** Default false: X-Forwarded-For is ignored. */
  trustProxy?: TrustProxy;
  /** Facts the deep health report shows as they are (e.g. the devchain's URL in embedded mode). */
  healthExtras?: Record<string, unknown>;
}

export function resolveUrls(c: { host: string; port: number; baseUrl?: string | undefined; siteUrl?: string | undefined }, boundPort: number) {
  const host = c.host.includes(":") ? `[${c.host}]` : c.host;
  const baseUrl = (c.baseUrl ?? `http://${host}:${boundPort}`).replace(/\/+$/, "");
  return { baseUrl, siteUrl: (c.siteUrl ?? baseUrl).replace(/\/+$/, "") };
}
