import { resolve } from "node:path";
import { describeConfig, loadConfig } from "@c402/config";
import { createLogger } from "@c402/logging";
import { onShutdown, startObservability } from "@c402/runtime";
import { embeddedConfigSpec } from "./config";
import { startEmbeddedSystem } from "./system";

const spec = embeddedConfigSpec;

async function main() {
  const config = loadConfig(spec);
  const logger = createLogger({ service: "embedded", level: config.logLevel });
  logger.info({ config: describeConfig(spec, config) }, "starting every service in one process");
  const observability = await startObservability("embedded", config, logger);
  // Lost while starting, the start fails on its own; once running, the process stops with code 1 for its supervisor to restart.
  const stopping: { shutDown?: (reason: string, exitCode: number) => void } = {};
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
    solanaEnabled: config.solanaEnabled,
    ...(config.solanaDevnetPort !== undefined ? { solanaDevnetPort: Number(config.solanaDevnetPort) } : {}),
    stellarEnabled: config.stellarEnabled,
    ...(config.stellarStandinPort !== undefined ? { stellarStandinPort: Number(config.stellarStandinPort) } : {}),
    ...(config.smtpUrl !== undefined ? { smtpUrl: config.smtpUrl } : {}),
    mailFrom: config.mailFrom,
    ...(config.escrowDefaultArbiterEvm !== undefined ? { escrowDefaultArbiterEvm: config.escrowDefaultArbiterEvm } : {}),
    ...(config.escrowDefaultArbiterSvm !== undefined ? { escrowDefaultArbiterSvm: config.escrowDefaultArbiterSvm } : {}),
    outboundAllowLoopback: config.outboundAllowLoopback,
    outboundResolveNames: config.outboundResolveNames,
    deadLetterAfterAttempts: config.deadLetterAfterAttempts,
    scheduleRehearsalDaySeconds: config.scheduleRehearsalDaySeconds,
    onDatabaseLost: () => stopping.shutDown?.("database lost", 1),
    logger,
  });
  logger.info({ url: system.gateway.baseUrl, grpc: system.grpcAddresses }, "ready");
  process.stdout.write(
    `\nc402 is running at ${system.gateway.baseUrl}  (data: ${config.dataDir}; devchain ${system.devchain.network} at ${system.devchain.url}; ${system.solanaDevnet ? `solana devnet at ${system.solanaDevnet.url}; ` : ""}${system.stellar ? `stellar stand-in at ${system.stellar.standin.url}; ` : ""}${system.mail}; ${system.origins})\n\n`,
  );
  stopping.shutDown = onShutdown(logger, async () => {
    await system.stop();
    await observability.stop();
  });
}

void main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
