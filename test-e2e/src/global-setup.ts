import { startTarget, type Mode, type Target } from "./target";

declare global {
  var __C402_E2E_TARGET__: Target | undefined;
}

export default async function globalSetup(): Promise<void> {
  const mode = (process.env.E2E_MODE ?? "embedded") as Mode;
  if (mode !== "embedded" && mode !== "distributed") throw new Error(`E2E_MODE must be embedded or distributed, not ${mode}`);
  const target = await startTarget(mode);
  globalThis.__C402_E2E_TARGET__ = target;
  process.env.E2E_BASE_URL = target.baseUrl;
  process.env.E2E_DATA_DIR = target.dataDir;
  process.env.E2E_LOGS_DIR = target.logsDir;
  process.env.E2E_RUN_MODE = mode;
  process.env.E2E_METRICS_URLS = JSON.stringify(target.metricsUrls);
  process.env.E2E_GRPC = JSON.stringify(target.grpc);
}
