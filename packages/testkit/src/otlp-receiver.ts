import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A span as the receiver keeps it, flattened from OTLP/JSON. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** 2 is ERROR. */
  statusCode: number;
  attributes: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:<port>: the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Export requests that were not OTLP/JSON (content type and size), for the protobuf check. */
  otherBodies: { contentType: string; bytes: number }[];
  /** Resolves with the trace's spans once `until` holds for them (or rejects after `timeoutMs`). */
  waitForTrace(traceId: string, until: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value?: AnyValue };

function valueOf(v: AnyValue | undefined): string | number | boolean {
  if (!v) return "";
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return "";
}

/** OTLP/JSON ids are hex; a base64 id (some encoders) is turned into hex. */
function hexId(id: unknown, hexLength: number): string {
  if (typeof id !== "string" || id === "") return "";
  if (new RegExp(`^[0-9a-f]{${hexLength}}$`).test(id)) return id;
  return Buffer.from(id, "base64").toString("hex");
}

function flatten(body: unknown): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  const resourceSpans = (body as { resourceSpans?: unknown[] }).resourceSpans ?? [];
  for (const rs of resourceSpans as { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[]) {
    const service = String(valueOf(rs.resource?.attributes?.find((a) => a.key === "service.name")?.value));
    for (const scope of rs.scopeSpans ?? []) {
      for (const s of scope.spans ?? []) {
        out.push({
          service,
          traceId: hexId(s.traceId, 32),
          spanId: hexId(s.spanId, 16),
          parentSpanId: hexId(s.parentSpanId, 16),
          name: String(s.name),
          kind: Number(s.kind ?? 0),
          statusCode: Number((s.status as { code?: number } | undefined)?.code ?? 0),
          attributes: Object.fromEntries(((s.attributes as KeyValue[] | undefined) ?? []).map((a) => [a.key, valueOf(a.value)])),
        });
      }
    }
  }
  return out;
}

/**
 * A loopback OpenTelemetry collector for tests: accepts OTLP/HTTP exports on
 * POST /v1/traces, keeps the spans of JSON exports (only the traces `keepTrace`
 * accepts, when given: a long suite exports far more than a test reads), and lets other processes
 * read them (GET /spans?trace_id=…, JSON), so a test worker can query the
 * spans a target sent to a receiver its global setup started.
 */
export async function startOtlpReceiver(opts: { port?: number; keepTrace?: (traceId: string) => boolean } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const otherBodies: OtlpReceiver["otherBodies"] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://receiver");
      if (req.method === "GET" && url.pathname === "/spans") {
        const traceId = url.searchParams.get("trace_id");
        const found = traceId ? spans.filter((s) => s.traceId === traceId) : spans;
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(found));
        return;
      }
      if (req.method !== "POST" || url.pathname !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const contentType = String(req.headers["content-type"] ?? "");
      if (contentType.startsWith("application/json")) {
        try {
          const received = flatten(JSON.parse(body.toString("utf8")));
          spans.push(...(opts.keepTrace ? received.filter((s) => opts.keepTrace?.(s.traceId)) : received));
        } catch {
          res.writeHead(400).end();
          return;
        }
      } else {
        otherBodies.push({ contentType, bytes: body.length });
      }
      res
        .writeHead(200, { "content-type": contentType.startsWith("application/json") ? "application/json" : "application/x-protobuf" })
        .end(contentType.startsWith("application/json") ? "{}" : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    spans,
    otherBodies,
    async waitForTrace(traceId, until, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = spans.filter((s) => s.traceId === traceId);
        if (until(found)) return found;
        if (Date.now() > deadline)
          throw new Error(`trace ${traceId}: ${found.length} spans after ${timeoutMs} ms: ${found.map((s) => `${s.service}:${s.name}`).join(", ")}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The spans of one trace from a receiver in another process (its GET /spans). */
export async function spansOfTrace(receiverUrl: string, traceId: string): Promise<ReceivedSpan[]> {
  const res = await fetch(`${receiverUrl}/spans?trace_id=${traceId}`);
  return (await res.json()) as ReceivedSpan[];
}
