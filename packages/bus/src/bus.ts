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

/**
 * Runs the handler until it succeeds or the subscription stops. Returns false
 * when stopped before success (the message stays unacknowledged).
 */
export async function deliverUntilHandled(
  message: Omit<DeliveredMessage, "attempt">,
  handler: MessageHandler,
  isStopped: () => boolean,
  onError: (err: unknown, attempt: number) => void,
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    if (isStopped()) return false;
    try {
      await handler({ ...message, attempt });
      return true;
    } catch (err) {
      onError(err, attempt);
      await sleep(backoffDelay(attempt));
    }
  }
}
