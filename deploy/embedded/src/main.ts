import { resolve } from "node:path";
import { describeConfig, env, loadConfig } from "@c402/config";
import { gatewayConfigSpec } from "@c402/gateway";
import { identityConfigSpec } from "@c402/identity";
import { createLogger } from "@c402/logging";
import { onShutdown } from "@c402/runtime";
import { startEmbeddedSystem } from "./system";

const spec = {
  ...gatewayConfigSpec,
  dataDir: env.string("DATA_DIR", "where the embedded database and secrets live", { default: ".data" }),
  devchainPort: env.optionalString("DEVCHAIN_PORT", "port of the local EVM chain (default 8545, or a free one when taken; 0 picks a free one)"),
  logLevel: env.oneOf("LOG_LEVEL", "log level", ["fatal", "error", "warn", "info", "debug", "trace"] as const, { default: "info" }),
  smtpUrl: identityConfigSpec.smtpUrl,
  mailFrom: identityConfigSpec.mailFrom,
  outboundAllowLoopback: env.bool("OUTBOUND_ALLOW_LOOPBACK", "let sellers' origins and MCP servers be on loopback (this machine)", { default: true }),
  outboundResolveNames: env.bool("OUTBOUND_RESOLVE_NAMES", "look up names in sellers' URLs in DNS (false: IP-literal URLs only)", { default: true }),
};

async function main() {
  const config = loadConfig(spec);
  const logger = createLogger({ service: "embedded", level: config.logLevel });
  logger.info({ config: describeConfig(spec, config) }, "starting every service in one process");
  const system = await startEmbeddedSystem({
    host: config.host,
    port: config.port,
    dataDir: config.dataDir === ":memory:" ? ":memory:" : resolve(config.dataDir),
    ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
    ...(config.siteUrl ? { siteUrl: config.siteUrl } : {}),
    serviceName: config.serviceName,
    authRateLimitPerMinute: config.authRateLimitPerMinute,
    authFailureLimitPerMinute: config.authFailureLimitPerMinute,
    packageCallsPerMinute: config.packageCallsPerMinute,
    trustProxy: config.trustProxy,
    ...(config.devchainPort !== undefined ? { devchainPort: Number(config.devchainPort) } : {}),
    ...(config.smtpUrl !== undefined ? { smtpUrl: config.smtpUrl } : {}),
    mailFrom: config.mailFrom,
    outboundAllowLoopback: config.outboundAllowLoopback,
    outboundResolveNames: config.outboundResolveNames,
    logger,
  });
  logger.info({ url: system.gateway.baseUrl, grpc: system.grpcAddresses }, "ready");
  process.stdout.write(
    `\nc402 is running at ${system.gateway.baseUrl}  (data: ${config.dataDir}; devchain ${system.devchain.network} at ${system.devchain.url}; ${system.mail}; ${system.origins})\n\n`,
  );
  onShutdown(logger, () => system.stop());
}

void main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
