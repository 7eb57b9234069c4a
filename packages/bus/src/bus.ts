import { consumerFailures } from "@c402/metrics";
import { isTraceparent, newRequestId, runWithContext, type RequestContext } from "@c402/request-context";
import { openSpan, SpanKind } from "@c402/tracing";

/**
 * The message bus as every service sees it: publish/subscribe with
 * at-least-once delivery and per-key order. A handler that throws is retried
 * (with backoff) until it succeeds, so a message is never skipped; handlers
 * must therefore be idempotent (see idempotentConsumer).
 */
export interface BusMessage {
  key: string;
  value: Uint8Array;
  headers?: Record<string, string>;
}

export interface DeliveredMessage extends BusMessage {
  topic: string;
  /** Delivery attempt for this message within this subscription, from 1. */
  attempt: number;
}

export type MessageHandler = (message: DeliveredMessage) => Promise<void>;

export interface SubscribeOptions {
  topic: string;
  /** Consumer group: each group receives every message once (at least). */
  group: string;
  handler: MessageHandler;
}

export interface Subscription {
  stop(): Promise<void>;
}

export interface Bus {
  /** Resolves once the broker durably accepted every message. */
  publish(topic: string, messages: BusMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  ensureTopics(topics: string[]): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const RETRY_BACKOFF_MS = { first: 50, max: 5_000 };

export function backoffDelay(attempt: number): number {
  return Math.min(RETRY_BACKOFF_MS.max, RETRY_BACKOFF_MS.first * 2 ** Math.max(0, attempt - 1));
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Record headers that carry the request context from the outbox to the consumers. */
export const TRACE_HEADERS = { traceparent: "traceparent", requestId: "x-request-id" } as const;

/** The request context a message carries in its headers (a fresh request id when it carries none). */
export function contextOfHeaders(headers: Record<string, string> | undefined): RequestContext {
  const requestId = headers?.[TRACE_HEADERS.requestId];
  const traceparent = headers?.[TRACE_HEADERS.traceparent];
  return {
    requestId: typeof requestId === "string" && requestId.length > 0 && requestId.length <= 128 ? requestId : newRequestId(),
    ...(isTraceparent(traceparent) ? { traceparent } : {}),
  };
}

/**
 * Runs the handler until it succeeds or the subscription stops. Returns false
 * when stopped before success (the message stays unacknowledged). Each
 * attempt runs in the request context the message carries (so its log lines
 * name the request that caused the event), inside a consumer span.
 */
export async function deliverUntilHandled(
  message: Omit<DeliveredMessage, "attempt">,
  handler: MessageHandler,
  isStopped: () => boolean,
  onError: (err: unknown, attempt: number) => void,
  group: string,
): Promise<boolean> {
  const carried = contextOfHeaders(message.headers);
  for (let attempt = 1; ; attempt++) {
    if (isStopped()) return false;
    const span = openSpan(`${message.topic} process`, {
      kind: SpanKind.CONSUMER,
      parent: carried,
      attributes: { "messaging.system": "kafka", "messaging.destination.name": message.topic, "messaging.consumer.group.name": group, attempt },
    });
    try {
      await runWithContext(span.context ?? carried, () => handler({ ...message, attempt }));
      span.end();
      return true;
    } catch (err) {
      span.end(err);
      consumerFailures.inc({ topic: message.topic, group });
      onError(err, attempt);
      await sleep(backoffDelay(attempt));
    }
  }
}
