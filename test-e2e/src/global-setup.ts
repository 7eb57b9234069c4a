import { startOtlpReceiver, type OtlpReceiver } from "@c402/testkit/otlp-receiver";
import { E2E_TRACE_PREFIX } from "./tracing";
import { startTarget, type Mode, type Target } from "./target";

declare global {
  var __C402_E2E_TARGET__: Target | undefined;
  var __C402_E2E_COLLECTOR__: OtlpReceiver | undefined;
}

export default async function globalSetup(): Promise<void> {
  const mode = (process.env.E2E_MODE ?? "embedded") as Mode;
  if (mode !== "embedded" && mode !== "distributed") throw new Error(`E2E_MODE must be embedded or distributed, not ${mode}`);
  // The target exports its spans to a loopback collector, which keeps only the traces tests start on purpose.
  const collector = await startOtlpReceiver({ keepTrace: (traceId) => traceId.startsWith(E2E_TRACE_PREFIX) });
  globalThis.__C402_E2E_COLLECTOR__ = collector;
  process.env.E2E_OTLP_URL = collector.url;
  const target = await startTarget(mode, {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "200",
  });
  globalThis.__C402_E2E_TARGET__ = target;
  process.env.E2E_BASE_URL = target.baseUrl;
  process.env.E2E_DATA_DIR = target.dataDir;
  process.env.E2E_LOGS_DIR = target.logsDir;
  process.env.E2E_RUN_MODE = mode;
  process.env.E2E_METRICS_URLS = JSON.stringify(target.metricsUrls);
  process.env.E2E_GRPC = JSON.stringify(target.grpc);
}
