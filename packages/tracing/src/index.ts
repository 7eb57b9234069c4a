import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type SpanContext, type Tracer } from "@opentelemetry/api";
import { env, loadConfig, type ConfigOf, type ConfigSpec } from "@c402/config";
import { currentContext, isTraceparent, newRequestId, runWithContext, type RequestContext } from "@c402/request-context";
import { OTLPTraceExporter as OtlpJsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OtlpProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TracerProvider } from "@opentelemetry/sdk-trace";

export { SpanKind };
export type { Attributes };

/**
 * OpenTelemetry spans for every hop of a request. The trace context travels in
 * the request context (@c402/request-context: AsyncLocalStorage, gRPC
 * metadata, Kafka record headers), which already carries a W3C traceparent
 * for the logs; a span started here becomes the parent of what runs inside it
 * by replacing that traceparent. With no exporter configured nothing is
 * recorded and the helpers only call through, so tracing costs nothing when
 * it is off.
 */

/**
 * The standard OpenTelemetry variables this process reads. The exporter reads
 * the rest of the OTLP family itself (per-signal endpoints, timeout,
 * compression, certificates), as the OpenTelemetry specification defines them.
 */
export const tracingSpec = {
  otelSdkDisabled: env.bool("OTEL_SDK_DISABLED", "turns tracing off whatever else is set", { default: false }),
  otelTracesExporter: env.oneOf("OTEL_TRACES_EXPORTER", "where spans go: otlp, or none (unset: otlp when an OTLP endpoint is set)", ["otlp", "none"] as const, {
    default: "otlp",
  }),
  otelEndpoint: env.optionalString(
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTLP/HTTP collector base URL (spans go to <url>/v1/traces); tracing is off unless it or the traces endpoint is set",
  ),
  otelTracesEndpoint: env.optionalString("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTLP/HTTP URL that receives spans, as is (overrides the base URL)"),
  otelProtocol: env.oneOf("OTEL_EXPORTER_OTLP_PROTOCOL", "OTLP encoding over HTTP", ["http/protobuf", "http/json"] as const, { default: "http/protobuf" }),
  otelHeaders: env.optionalString("OTEL_EXPORTER_OTLP_HEADERS", "headers sent to the collector, key=value pairs separated by commas (often an API key)", {
    secret: true,
  }),
  otelServiceName: env.optionalString("OTEL_SERVICE_NAME", "the service.name spans carry (default: c402-<service>)"),
  otelBatchDelayMs: env.int("OTEL_BSP_SCHEDULE_DELAY", "milliseconds between two exports of finished spans", { default: 5_000, min: 1, max: 600_000 }),
} satisfies ConfigSpec;

export type TracingConfig = ConfigOf<typeof tracingSpec>;

let tracer: Tracer | undefined;
let provider: TracerProvider | undefined;

/** Whether spans are recorded in this process (an exporter is configured). */
export function tracingEnabled(): boolean {
  return tracer !== undefined;
}

/** Whether the settings ask for spans to be exported. */
export function exportRequested(config: TracingConfig): boolean {
  return !config.otelSdkDisabled && config.otelTracesExporter === "otlp" && Boolean(config.otelEndpoint || config.otelTracesEndpoint);
}

/**
 * Starts recording and exporting spans when the OTEL_* settings ask for it;
 * once per process (the embedded host runs every service in one process, so
 * its first call names the process). Returns how to flush and stop.
 */
export function startTracing(opts: { service: string; config?: TracingConfig }): { shutdown(): Promise<void> } {
  const config = opts.config ?? loadConfig(tracingSpec);
  if (provider || !exportRequested(config)) return { shutdown: async () => {} };
  // The URL from the settings read here (the base URL gets the traces path, as the standard says); headers, timeout and TLS the exporter reads itself.
  const url = config.otelTracesEndpoint ?? `${(config.otelEndpoint as string).replace(/\/+$/, "")}/v1/traces`;
  const exporter = config.otelProtocol === "http/json" ? new OtlpJsonExporter({ url }) : new OtlpProtobufExporter({ url });
  const started = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": config.otelServiceName ?? `c402-${opts.service}` }),
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.otelBatchDelayMs })],
  });
  provider = started;
  tracer = started.getTracer("c402");
  return {
    shutdown: async () => {
      if (provider !== started) return;
      provider = undefined;
      tracer = undefined;
      await started.shutdown();
    },
  };
}

function parentOf(context: RequestContext | undefined) {
  const traceparent = context?.traceparent;
  if (!isTraceparent(traceparent)) return ROOT_CONTEXT;
  const [, traceId, spanId, flags] = traceparent.split("-") as [string, string, string, string];
  const parent: SpanContext = { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true };
  return trace.setSpanContext(ROOT_CONTEXT, parent);
}

/** The W3C traceparent naming a span: what its children are given as their parent. */
export function traceparentOfSpan(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-${c.traceFlags.toString(16).padStart(2, "0")}`;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The context the span continues (default: the current request's). */
  parent?: RequestContext;
  /** Epoch milliseconds, for a span recorded after the fact. */
  startTime?: number;
}

/** A started span and the request context of what runs inside it. */
export interface OpenSpan {
  /** The request context naming this span as the parent (the parent's own when nothing is recorded). */
  readonly context: RequestContext | undefined;
  setAttributes(attributes: Attributes): void;
  /** Ends the span; an error marks it failed. */
  end(error?: unknown): void;
}

const NOT_RECORDED: Omit<OpenSpan, "context"> = { setAttributes: () => {}, end: () => {} };

/** Starts a span that the caller ends (an HTTP request ends when its answer is sent). */
export function openSpan(name: string, options: SpanOptions = {}): OpenSpan {
  const parent = options.parent ?? currentContext();
  if (!tracer) return { ...NOT_RECORDED, context: parent };
  const span = tracer.startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, startTime: options.startTime },
    parentOf(parent),
  );
  return {
    context: { requestId: parent?.requestId ?? newRequestId(), ...parent, traceparent: traceparentOfSpan(span) },
    setAttributes: (attributes) => span.setAttributes(attributes),
    end: (error) => {
      if (error !== undefined) markFailed(span, error);
      span.end();
    },
  };
}

/** Runs `fn` inside a new span (its context current for everything `fn` starts); a throw marks the span failed. */
export async function inSpan<T>(name: string, options: SpanOptions, fn: () => Promise<T>): Promise<T> {
  if (!tracer) return fn();
  const span = openSpan(name, options);
  try {
    const result = span.context ? await runWithContext(span.context, fn) : await fn();
    span.end();
    return result;
  } catch (err) {
    span.end(err);
    throw err;
  }
}

/** Records a span that already ended (a query, a chain call, measured by its caller), under the current request. */
export function recordSpan(name: string, options: SpanOptions & { startTime: number; endTime: number; error?: unknown }): void {
  if (!tracer) return;
  const span = tracer.startSpan(
    name,
    { kind: options.kind ?? SpanKind.CLIENT, attributes: options.attributes, startTime: options.startTime },
    parentOf(options.parent ?? currentContext()),
  );
  if (options.error !== undefined) markFailed(span, options.error);
  span.end(options.endTime);
}

function markFailed(span: Span, error: unknown): void {
  // The error's kind, never its text: messages can carry payload fragments or addresses.
  const type = error instanceof Error ? error.name : typeof error;
  span.setAttribute("error.type", type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}
