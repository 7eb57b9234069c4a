import { loadConfig } from "@c402/config";
import { currentContext, runWithContext, traceIdOf } from "@c402/request-context";
import { startOtlpReceiver, type OtlpReceiver } from "@c402/testkit/otlp-receiver";
import { inSpan, openSpan, recordSpan, SpanKind, startTracing, tracingEnabled, tracingSpec } from "../src";

const INCOMING = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

function configFor(receiver: OtlpReceiver, protocol: "http/json" | "http/protobuf") {
  return loadConfig(tracingSpec, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_BSP_SCHEDULE_DELAY: "50",
    OTEL_SERVICE_NAME: "c402-tracing-test",
  });
}

describe("tracing", () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(() => receiver.close());

  it("is off unless an OTLP endpoint is set, and then changes no context", async () => {
    expect(startTracing({ service: "test", config: loadConfig(tracingSpec, {}) })).toBeDefined();
    expect(tracingEnabled()).toBe(false);
    // Set but switched off, either way.
    startTracing({ service: "test", config: loadConfig(tracingSpec, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: "true" }) });
    startTracing({ service: "test", config: loadConfig(tracingSpec, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_EXPORTER: "none" }) });
    expect(tracingEnabled()).toBe(false);
    const context = { requestId: "req_off", traceparent: INCOMING };
    await runWithContext(context, async () => {
      expect(openSpan("x").context).toBe(context);
      expect(await inSpan("y", {}, async () => currentContext())).toBe(context);
      recordSpan("z", { startTime: Date.now() - 1, endTime: Date.now() });
    });
    expect(receiver.spans).toHaveLength(0);
  });

  it("refuses an OTLP protocol it cannot speak (gRPC), naming the variable", () => {
    expect(() => loadConfig(tracingSpec, { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL must be one of http\/protobuf, http\/json/,
    );
  });

  it("continues the incoming trace: each span is the parent of what runs inside it, and failures are marked without their text", async () => {
    const tracing = startTracing({ service: "test", config: configFor(receiver, "http/json") });
    expect(tracingEnabled()).toBe(true);
    const seen: Record<string, string | undefined> = {};
    await runWithContext({ requestId: "req_traced", traceparent: INCOMING }, () =>
      inSpan("outer", { kind: SpanKind.SERVER }, async () => {
        seen.outer = currentContext()?.traceparent;
        expect(currentContext()?.requestId).toBe("req_traced");
        const child = openSpan("child", { kind: SpanKind.CLIENT });
        seen.child = child.context?.traceparent;
        child.end();
        recordSpan("select", { startTime: Date.now() - 5, endTime: Date.now(), error: new Error("secret payload 0xdeadbeef") });
        await expect(
          inSpan("failing", {}, async () => {
            throw new TypeError("boom with a private detail");
          }),
        ).rejects.toThrow("boom");
      }),
    );
    await tracing.shutdown(); // flushes
    const traceId = traceIdOf(INCOMING);
    const spans = await receiver.waitForTrace(traceId, (s) => s.length === 4, 5_000);
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
    const outer = byName.outer!;
    expect(outer).toMatchObject({ service: "c402-tracing-test", parentSpanId: "b7ad6b7169203331", kind: 2 });
    expect(seen.outer).toBe(`00-${traceId}-${outer.spanId}-01`);
    expect(byName.child).toMatchObject({ parentSpanId: outer.spanId, kind: 3 });
    expect(seen.child).toBe(`00-${traceId}-${byName.child!.spanId}-01`);
    expect(byName.select).toMatchObject({ parentSpanId: outer.spanId, statusCode: 2, attributes: { "error.type": "Error" } });
    expect(byName.failing).toMatchObject({ parentSpanId: outer.spanId, statusCode: 2, attributes: { "error.type": "TypeError" } });
    expect(JSON.stringify(spans)).not.toMatch(/secret payload|private detail/);
    expect(outer.statusCode).toBe(0);
    expect(tracingEnabled()).toBe(false);
  });

  it("starts a new trace for work that comes with none, with a fresh request id", async () => {
    const tracing = startTracing({ service: "test", config: configFor(receiver, "http/json") });
    const span = openSpan("sweep round", { parent: undefined });
    expect(span.context?.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    const traceId = traceIdOf(span.context?.traceparent as string);
    expect(traceId).not.toBe(traceIdOf(INCOMING));
    span.end();
    await tracing.shutdown();
    const [root] = await receiver.waitForTrace(traceId, (s) => s.length === 1, 5_000);
    expect(root).toMatchObject({ name: "sweep round", parentSpanId: "", kind: 1 });
  });

  it("exports OTLP protobuf by default (the standard's default protocol)", async () => {
    const before = receiver.otherBodies.length;
    const tracing = startTracing({ service: "test", config: configFor(receiver, "http/protobuf") });
    openSpan("one").end();
    await tracing.shutdown();
    expect(receiver.otherBodies.length).toBe(before + 1);
    expect(receiver.otherBodies.at(-1)).toMatchObject({ contentType: "application/x-protobuf" });
    expect(receiver.otherBodies.at(-1)!.bytes).toBeGreaterThan(20);
    expect(loadConfig(tracingSpec, {}).otelProtocol).toBe("http/protobuf");
  });
});
