/**
 * Child process: the whole c402 system, embedded (every service, PGlite and
 * the devchain), exactly as `pnpm start` runs it, on a free loopback port.
 * Logs are quiet (LOG_LEVEL, set by the parent) so they cost nothing.
 */
import { startEmbeddedSystem } from "@c402/embedded";
import { startMetricsServer } from "@c402/metrics";
import { freePort, serveChild } from "../lib/child";

export interface OursInfo {
  baseUrl: string;
  /** GET /metrics of the system (every service in this one process): the round trips per request. */
  metricsUrl: string;
  devchain: { url: string; usdc: `0x${string}`; mnemonic: string; splitFactory: `0x${string}`; feeWallet: `0x${string}` };
}

serveChild<OursInfo>(async () => {
  const system = await startEmbeddedSystem({
    dataDir: ":memory:",
    host: "127.0.0.1",
    port: await freePort(),
    devchainPort: 0,
    // The bench signs in one seller; wallet sign-in is the only rate-limited route.
    authRateLimitPerMinute: 10_000,
    // The package-calls run spends one key from many connections at once: the default 60 calls a
    // minute per key would turn almost every call into a 429, so the bench lifts it out of the way.
    packageCallsPerMinute: 10_000_000,
  });
  const metrics = await startMetricsServer({ host: "127.0.0.1", port: 0 });
  const d = system.devchain;
  return {
    info: {
      baseUrl: system.gateway.baseUrl,
      metricsUrl: `http://127.0.0.1:${metrics.port}/metrics`,
      devchain: { url: d.url, usdc: d.usdc, mnemonic: d.mnemonic, splitFactory: d.splitFactory, feeWallet: d.feeWallet },
    },
    stop: async () => {
      await metrics.close();
      await system.stop();
    },
  };
});
