import { env } from "@c402/config";

/** Gateway settings shared by both run modes. */
export const gatewayConfigSpec = {
  host: env.string("HOST", "address the HTTP server binds", { default: "127.0.0.1" }),
  port: env.int("PORT", "HTTP port of the gateway", { default: 4020, min: 0, max: 65535 }),
  baseUrl: env.optionalString("BASE_URL", "public base URL (default http://HOST:PORT)"),
  siteUrl: env.optionalString("SITE_URL", "URL used in problem type URIs and links (default BASE_URL)"),
  serviceName: env.string("SERVICE_NAME", "service name used in /.well-known/<name> and the root map", { default: "c402" }),
  authRateLimitPerMinute: env.int("AUTH_RATE_LIMIT_PER_MINUTE", "wallet sign-in requests per minute per client address", { default: 30, min: 1 }),
};

/** Extra settings of the gateway process in distributed mode. */
export const gatewayDistributedSpec = {
  redisUrl: env.string("REDIS_URL", "Redis URL for caches and rate limits", { secret: true }),
  identityAddress: env.string("IDENTITY_GRPC_ADDRESS", "host:port of identity"),
  catalogAddress: env.string("CATALOG_GRPC_ADDRESS", "host:port of catalog"),
  paymentsAddress: env.string("PAYMENTS_GRPC_ADDRESS", "host:port of payments"),
  webhooksAddress: env.string("WEBHOOKS_GRPC_ADDRESS", "host:port of webhooks"),
  logLevel: env.oneOf("LOG_LEVEL", "log level", ["fatal", "error", "warn", "info", "debug", "trace"] as const, { default: "info" }),
  devchainUrl: env.optionalString("DEVCHAIN_URL", "local EVM chain URL to show in the deep health report (local runs only)"),
};

export interface GatewaySettings {
  baseUrl: string;
  siteUrl: string;
  serviceName: string;
  version: string;
  runMode: "embedded" | "distributed";
  authRateLimitPerMinute: number;
  /** Facts the deep health report shows as they are (e.g. the devchain's URL in embedded mode). */
  healthExtras?: Record<string, unknown>;
}

export function resolveUrls(c: { host: string; port: number; baseUrl?: string | undefined; siteUrl?: string | undefined }, boundPort: number) {
  const host = c.host.includes(":") ? `[${c.host}]` : c.host;
  const baseUrl = (c.baseUrl ?? `http://${host}:${boundPort}`).replace(/\/+$/, "");
  return { baseUrl, siteUrl: (c.siteUrl ?? baseUrl).replace(/\/+$/, "") };
}
