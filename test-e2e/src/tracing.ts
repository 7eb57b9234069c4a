import { randomBytes } from "node:crypto";
import { spansOfTrace, type ReceivedSpan } from "@c402/testkit/otlp-receiver";

/** Trace ids the suite's collector keeps: a test that reads a trace starts it with this prefix. */
export const E2E_TRACE_PREFIX = "c402e2e0";

/** A W3C traceparent of a new trace the collector keeps, with its trace id and the caller's span id. */
export function keptTrace(): { traceparent: string; traceId: string; spanId: string } {
  const traceId = `${E2E_TRACE_PREFIX}${randomBytes(12).toString("hex")}`;
  const spanId = randomBytes(8).toString("hex");
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

/** The spans of a trace once `until` holds for them, read from the suite's collector (it runs in the global setup's process). */
export async function waitForTrace(traceId: string, until: (spans: ReceivedSpan[]) => boolean, timeoutMs = 60_000): Promise<ReceivedSpan[]> {
  const url = process.env.E2E_OTLP_URL;
  if (!url) throw new Error("E2E_OTLP_URL is not set (run through test-e2e/jest.config.js)");
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const spans = await spansOfTrace(url, traceId);
    if (until(spans)) return spans;
    if (Date.now() > deadline)
      throw new Error(`trace ${traceId}: ${spans.length} spans after ${timeoutMs} ms: ${spans.map((s) => `${s.service}:${s.name}`).join(", ")}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
