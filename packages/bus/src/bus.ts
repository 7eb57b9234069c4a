import { consumerFailures, deadLetterCount } from "@c402/metrics";
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

/** The messages of one fetch, in order (see SubscribeOptions.handleMany). */
export type BatchHandler = (messages: DeliveredMessage[]) => Promise<void>;

export interface SubscribeOptions {
  topic: string;
  /** Consumer group: each group receives every message once (at least). */
  group: string;
  handler: MessageHandler;
  /**
   * Handles the messages of one fetch together, in order (one statement for
   * all of them, say); it must leave each message as `handler` would. When it
   * throws, the fetch's messages go one by one to `handler`, with its retries
   * and dead letters, so a poison message still stops only itself.
   */
  handleMany?: BatchHandler;
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
 * When a message that keeps failing stops blocking its partition: after
 * `afterAttempts` failed attempts it goes to its group's dead-letter topic,
 * but only while the consumer's own dependencies answer. A failure while they
 * do not is an outage, not a poison message: it is retried without limit, so
 * an outage never empties a partition into the dead-letter topic.
 */
export interface DeadLetterPolicy {
  afterAttempts: number;
  dependenciesHealthy: () => Promise<boolean>;
  /** Hears of each message sent to the dead-letter topic (an alert: someone must look at it). */
  onDeadLetter?: (topic: string, group: string, err: unknown) => void;
}

/** The dead-letter topic of a consumer group: every message of any topic the group gave up on. */
export function deadLetterTopicOf(group: string): string {
  return `dead-letter.${group}`;
}

/** Headers a dead letter carries beside the original ones: where it came from and why it failed. */
export const DEAD_LETTER_HEADERS = {
  topic: "x-dead-letter-topic",
  group: "x-dead-letter-group",
  attempts: "x-dead-letter-attempts",
  error: "x-dead-letter-error",
} as const;

/** How a bus sends a dead letter: to the group's dead-letter topic, on the same bus. */
export interface DeadLetters {
  policy: DeadLetterPolicy;
  send(topic: string, message: BusMessage): Promise<void>;
}

function deadLetterOf(message: Omit<DeliveredMessage, "attempt">, group: string, attempts: number, err: unknown): BusMessage {
  const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return {
    key: message.key,
    value: message.value,
    headers: {
      ...message.headers,
      [DEAD_LETTER_HEADERS.topic]: message.topic,
      [DEAD_LETTER_HEADERS.group]: group,
      [DEAD_LETTER_HEADERS.attempts]: String(attempts),
      [DEAD_LETTER_HEADERS.error]: error.length > 500 ? `${error.slice(0, 500)}…` : error,
    },
  };
}

/** Whether a message that failed `attempt` times now goes to the dead-letter topic (sent there when so). */
async function deadLettered(deadLetters: DeadLetters | undefined, message: Omit<DeliveredMessage, "attempt">, group: string, attempt: number, err: unknown) {
  if (!deadLetters || attempt < deadLetters.policy.afterAttempts) return false;
  if (!(await deadLetters.policy.dependenciesHealthy().catch(() => false))) return false;
  try {
    await deadLetters.send(deadLetterTopicOf(group), deadLetterOf(message, group, attempt, err));
  } catch {
    return false; // the bus is down too: retried like any failure
  }
  deadLetterCount.inc({ topic: message.topic, group });
  deadLetters.policy.onDeadLetter?.(message.topic, group, err);
  return true;
}

/**
 * Runs the handler until it succeeds, the message is dead-lettered (see
 * DeadLetterPolicy) or the subscription stops. Returns false when stopped
 * before either (the message stays unacknowledged). Each attempt runs in the
 * request context the message carries (so its log lines name the request
 * that caused the event), inside a consumer span.
 */
export async function deliverUntilHandled(
  message: Omit<DeliveredMessage, "attempt">,
  handler: MessageHandler,
  isStopped: () => boolean,
  onError: (err: unknown, attempt: number) => void,
  group: string,
  deadLetters?: DeadLetters,
  keepAlive?: () => Promise<void>,
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
      if (await deadLettered(deadLetters, message, group, attempt, err)) return true;
      await sleep(backoffDelay(attempt));
      // A broker drops a member it has not heard from within its session: retrying through a long outage must not leave the group.
      await keepAlive?.().catch(() => undefined);
    }
  }
}

/**
 * Delivers the messages of one fetch, in order: all together to
 * `handleMany` when the subscription has one and there are several; one by
 * one through deliverUntilHandled otherwise, or when that throws (each then
 * handled again, which handlers allow). `onHandled(i)` hears of each message
 * handled, in order; `keepAlive` runs between a failing handler's attempts
 * (Kafka's heartbeat). Returns false when the subscription stopped first (the
 * rest stays unacknowledged).
 */
export async function deliverFetched(
  messages: Omit<DeliveredMessage, "attempt">[],
  subscription: Pick<SubscribeOptions, "handler" | "handleMany">,
  isStopped: () => boolean,
  onError: (err: unknown, attempt: number) => void,
  group: string,
  deadLetters: DeadLetters | undefined,
  onHandled: (index: number) => Promise<void> | void,
  keepAlive?: () => Promise<void>,
): Promise<boolean> {
  const { handler, handleMany } = subscription;
  if (handleMany && messages.length > 1 && !isStopped() && (await handledTogether(messages, handleMany, group, onError))) {
    for (let i = 0; i < messages.length; i++) await onHandled(i);
    return true;
  }
  for (let i = 0; i < messages.length; i++) {
    if (isStopped()) return false;
    if (!(await deliverUntilHandled(messages[i]!, handler, isStopped, onError, group, deadLetters, keepAlive))) return false;
    await onHandled(i);
  }
  return true;
}

/** One attempt at a fetch all together, in the first message's context, inside one consumer span; a failure is reported as attempt 0. */
async function handledTogether(
  messages: Omit<DeliveredMessage, "attempt">[],
  handleMany: BatchHandler,
  group: string,
  onError: (err: unknown, attempt: number) => void,
) {
  const first = messages[0]!;
  const carried = contextOfHeaders(first.headers);
  const span = openSpan(`${first.topic} process`, {
    kind: SpanKind.CONSUMER,
    parent: carried,
    attributes: {
      "messaging.system": "kafka",
      "messaging.destination.name": first.topic,
      "messaging.consumer.group.name": group,
      "messaging.batch.message_count": messages.length,
    },
  });
  try {
    await runWithContext(span.context ?? carried, () => handleMany(messages.map((m) => ({ ...m, attempt: 1 }))));
    span.end();
    return true;
  } catch (err) {
    span.end(err);
    onError(err, 0);
    return false;
  }
}
