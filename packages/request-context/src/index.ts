import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { pooledRandomBytes } from "@c402/ids";

/**
 * Request-scoped context that crosses service boundaries: the request id the
 * gateway assigned and the W3C trace context. The rpc client copies it into
 * call metadata; the rpc server restores it around each handler.
 */
export interface RequestContext {
  requestId: string;
  traceparent?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

export function newRequestId(): string {
  return `req_${randomUUID().replace(/-/g, "")}`;
}

const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

export function isTraceparent(value: unknown): value is string {
  return typeof value === "string" && TRACEPARENT.test(value) && traceIdOf(value) !== "0".repeat(32);
}

/** A new trace context (W3C traceparent, sampled), for a request that came without one. */
export function newTraceparent(): string {
  // One draw for both ids: the face fast path starts a trace for every unpaid quote.
  const hex = pooledRandomBytes(24).toString("hex");
  return `00-${hex.slice(0, 32)}-${hex.slice(32)}-01`;
}

/** The trace id of a traceparent: what every log line of the request carries as `trace_id`. */
export function traceIdOf(traceparent: string): string {
  return traceparent.slice(3, 35);
}
