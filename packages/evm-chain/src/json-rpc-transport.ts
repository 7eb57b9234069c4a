import { channel } from "node:diagnostics_channel";
import http from "node:http";
import https from "node:https";
import { performance } from "node:perf_hooks";
import { chainRpcDuration, chainRpcErrors } from "@c402/metrics";
import { recordSpan, SpanKind } from "@c402/tracing";
import { createTransport, HttpRequestError, RpcRequestError, TimeoutError, type EIP1193RequestFn, type Transport } from "viem";

/**
 * Published on after every JSON-RPC call ({ method, ms, ok }) when someone
 * listens (metrics, the benchmark's RPC accounting); free otherwise.
 */
export const RPC_CALL_CHANNEL = "c402:evm-rpc:call";
const calls = channel(RPC_CALL_CHANNEL);

/** Larger answers are refused (viem's http transport uses the same bound). */
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/**
 * viem transport for one JSON-RPC node over HTTP(S) on kept-alive sockets.
 * viem's own `http` transport goes through global fetch, whose streams,
 * signals and header objects cost more than the settlement's own work on a
 * busy process; this one sends the same JSON-RPC requests with node:http and
 * raises the same error classes (a JSON-RPC error: RpcRequestError with the
 * node's code and data; anything else: HttpRequestError; no answer in time:
 * TimeoutError), so viem maps them exactly as it does for `http`.
 */
export function jsonRpcTransport(url: string, opts: { timeoutMs: number; maxSockets?: number }): Transport<"http"> {
  const target = new URL(url);
  const client = target.protocol === "https:" ? https : http;
  const agent = new client.Agent({ keepAlive: true, maxSockets: opts.maxSockets ?? 32 });
  const auth = target.username ? `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}` : undefined;
  // Errors name the node by its origin only: providers put API keys in the path or the credentials.
  const shownUrl = target.origin;
  let id = 0;

  function post(body: { method: string; params?: unknown }): Promise<{ status: number; json: unknown; text: string }> {
    const payload = JSON.stringify({ jsonrpc: "2.0", id: ++id, method: body.method, params: body.params ?? [] });
    return new Promise((resolve, reject) => {
      const req = client.request(
        {
          agent,
          protocol: target.protocol,
          hostname: target.hostname,
          port: target.port,
          path: `${target.pathname}${target.search}`,
          method: "POST",
          ...(auth ? { auth } : {}),
          headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(payload) },
          timeout: opts.timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) {
              req.destroy(new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, json, text });
          });
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(Object.assign(new Error("timed out"), { timedOut: true })));
      req.on("error", reject);
      req.end(payload);
    });
  }

  return () =>
    createTransport({
      key: "json-rpc",
      name: "JSON-RPC over HTTP",
      type: "http",
      retryCount: 0,
      timeout: opts.timeoutMs,
      request: (async ({ method, params }: { method: string; params?: unknown }) => {
        const body = { method, params };
        const started = performance.now();
        const startedAt = Date.now();
        let ok = false;
        try {
          let answer: Awaited<ReturnType<typeof post>>;
          try {
            answer = await post(body);
          } catch (err) {
            if ((err as { timedOut?: boolean }).timedOut) throw new TimeoutError({ body, url: shownUrl });
            throw new HttpRequestError({ body, cause: err as Error, url: shownUrl });
          }
          const json = answer.json as { result?: unknown; error?: { code: number; message: string; data?: unknown } } | undefined;
          if (json && typeof json === "object" && json.error) throw new RpcRequestError({ body, error: json.error, url: shownUrl, status: answer.status });
          if (answer.status < 200 || answer.status >= 300 || !json || typeof json !== "object" || !("result" in json)) {
            throw new HttpRequestError({ body, details: answer.text.slice(0, 500) || `HTTP ${answer.status}`, status: answer.status, url: shownUrl });
          }
          ok = true;
          return json.result;
        } finally {
          const ms = performance.now() - started;
          if (calls.hasSubscribers) calls.publish({ method, ms, ok });
          chainRpcDuration.observe({ method, outcome: ok ? "ok" : "error" }, ms / 1000);
          if (!ok) chainRpcErrors.inc({ method });
          // The node by its origin only: providers put API keys in the path.
          recordSpan(method, {
            kind: SpanKind.CLIENT,
            startTime: startedAt,
            endTime: startedAt + ms,
            attributes: { "rpc.system.name": "jsonrpc", "rpc.method": method, "server.address": target.hostname },
            ...(ok ? {} : { error: new Error("chain call failed") }),
          });
        }
      }) as EIP1193RequestFn,
    });
}
