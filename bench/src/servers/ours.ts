/**
 * Child process: the whole c402 system, embedded (every service, PGlite and
 * the devchain), exactly as `npm start` runs it, on a free loopback port: its
 * database on disk, in a fresh folder removed at the stop (`:memory:`, what
 * tests use, grows each data file by copying it whole, and measured 25–30%
 * slower; bench/README.md).
 * Logs are quiet (LOG_LEVEL, set by the parent) so they cost nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
  const dataDir = mkdtempSync(join(tmpdir(), "c402-bench-data-"));
  const system = await startEmbeddedSystem({
    dataDir,
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
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});
