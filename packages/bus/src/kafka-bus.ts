import { Kafka, logLevel, Partitioners, type Producer, type Admin, type SASLOptions } from "kafkajs";
import { consumerLag } from "@c402/metrics";
import { deliverFetched, type Bus, type BusMessage, type DeadLetterPolicy, type DeadLetters, type SubscribeOptions, type Subscription } from "./bus";
import { OffsetCommits } from "./offset-commits";

/** A busy group commits its offsets at most once a second (see OffsetCommits). */
const OFFSET_COMMIT_MS = 1_000;
/** How long a created topic may take to have leaders for all its partitions. */
const TOPIC_LEADERS_WAIT_MS = 30_000;

/** What a broker answers while a topic it just created is still spreading through its metadata. */
function isMetadataLag(err: unknown): boolean {
  const type = (err as { type?: unknown } | null)?.type;
  return type === "UNKNOWN_TOPIC_OR_PARTITION" || type === "LEADER_NOT_AVAILABLE";
}

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  /** Partitions for topics this bus creates. */
  partitions?: number;
  /** Replication factor of the topics this bus creates (1 on a single broker; 3 on a production cluster). */
  replicationFactor?: number;
  /** TLS to the brokers (the system's certificate authorities). */
  ssl?: boolean;
  /** SASL authentication to the brokers. */
  sasl?: { mechanism: "plain" | "scram-sha-256" | "scram-sha-512"; username: string; password: string };
  onHandlerError?: (err: unknown, topic: string, attempt: number) => void;
  /** When a message that keeps failing goes to its group's dead-letter topic (unset: retried for ever). */
  deadLetter?: DeadLetterPolicy;
  log?: (level: "error" | "warn", message: string) => void;
  /** A busy group commits its offsets at most once this often (default 1 s; see OffsetCommits). */
  offsetCommitMs?: number;
  /**
   * Put before every consumer group's name: a test's consumers then never share a group with the
   * services of another run on the same broker (which would be given the test's partitions).
   */
  groupPrefix?: string;
}

/**
 * Kafka through kafkajs: acks from all in-sync replicas on publish, manual
 * offset commits only after the handler succeeded (at-least-once). Each
 * partition is consumed in order (per-key order, since the key picks the
 * partition); the partitions of a subscription are consumed side by side, and
 * what a group handled is committed at most once a second, and when it stops.
 */
export class KafkaBus implements Bus {
  private readonly kafka: Kafka;
  private producer?: Producer;
  private admin?: Admin;
  /** Each subscription's stop: commits what it handled, then leaves its group. */
  private readonly subscriptions = new Set<() => Promise<void>>();
  private readonly partitions: number;

  constructor(private readonly opts: KafkaBusOptions) {
    this.partitions = opts.partitions ?? 3;
    this.kafka = new Kafka({
      clientId: opts.clientId,
      brokers: opts.brokers,
      ...(opts.ssl ? { ssl: true } : {}),
      ...(opts.sasl ? { sasl: opts.sasl as SASLOptions } : {}),
      connectionTimeout: 3_000,
      retry: { retries: 8, initialRetryTime: 100 },
      logLevel: logLevel.WARN,
      logCreator:
        () =>
        ({ level, log }) => {
          const text = `kafka ${log.namespace ?? ""}: ${log.message}`;
          if (level === logLevel.ERROR) opts.log?.("error", text);
          else if (level === logLevel.WARN) opts.log?.("warn", text);
        },
    });
  }

  private async getProducer(): Promise<Producer> {
    if (!this.producer) {
      const producer = this.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      this.producer = producer;
    }
    return this.producer;
  }

  private async getAdmin(): Promise<Admin> {
    if (!this.admin) {
      const admin = this.kafka.admin();
      await admin.connect();
      this.admin = admin;
    }
    return this.admin;
  }

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const producer = await this.getProducer();
    await producer.send({
      topic,
      acks: -1,
      messages: messages.map((m) => ({ key: m.key, value: Buffer.from(m.value), headers: m.headers })),
    });
  }

  async subscribe({ topic, group, handler, handleMany }: SubscribeOptions): Promise<Subscription> {
    const consumer = this.kafka.consumer({ groupId: `${this.opts.groupPrefix ?? ""}${group}`, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
    let stopped = false;
    const commits = new OffsetCommits(
      (offsets) => consumer.commitOffsets(offsets.map((o) => ({ topic, ...o }))),
      this.opts.offsetCommitMs ?? OFFSET_COMMIT_MS,
      (err) =>
        this.opts.log?.("warn", `kafka: committing group ${group}'s offsets on ${topic} failed (committed with the next, or redelivered): ${String(err)}`),
    );
    const stop = async () => {
      stopped = true;
      this.subscriptions.delete(stop);
      // Before the consumer leaves its group (a batch under way commits its own, below, before the runner stops).
      await commits.flush().catch(() => undefined);
      await consumer.disconnect();
      commits.close();
    };
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    this.subscriptions.add(stop);
    await consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: this.partitions,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        let handledUpTo: string | undefined;
        try {
          await deliverFetched(
            batch.messages.map((message) => {
              const headers: Record<string, string> = {};
              for (const [k, v] of Object.entries(message.headers ?? {})) if (v !== undefined) headers[k] = String(v);
              return { topic, key: message.key?.toString() ?? "", value: new Uint8Array(message.value ?? Buffer.alloc(0)), headers };
            }),
            { handler, ...(handleMany ? { handleMany } : {}) },
            // Stopping, or the partition went to another member: the rest is fetched again by whoever consumes next.
            () => stopped || !isRunning() || isStale(),
            (err, attempt) => this.opts.onHandlerError?.(err, topic, attempt),
            group,
            this.deadLetters,
            async (i) => {
              const { offset } = batch.messages[i]!;
              resolveOffset(offset);
              handledUpTo = offset;
              // What is left of the partition after this message, as of the fetch.
              consumerLag.set({ topic, group, partition: String(batch.partition) }, Math.max(0, Number(BigInt(batch.highWatermark) - BigInt(offset) - 1n)));
              await heartbeat();
            },
            heartbeat,
          );
        } finally {
          // What was handled is committed even when the batch ends early; a crash before that redelivers it (at least once).
          if (handledUpTo !== undefined) {
            await commits.handled(batch.partition, (BigInt(handledUpTo) + 1n).toString());
            if (stopped) await commits.flush();
          }
        }
      },
    });
    return { stop };
  }

  private get deadLetters(): DeadLetters | undefined {
    const policy = this.opts.deadLetter;
    if (!policy) return undefined;
    return {
      policy,
      send: async (topic, message) => {
        await this.ensureTopics([topic]);
        await this.publish(topic, [message]);
      },
    };
  }

  async ensureTopics(topics: string[]): Promise<void> {
    const admin = await this.getAdmin();
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length === 0) return;
    let createError: unknown;
    try {
      await admin.createTopics({
        // kafkajs's own wait gives up on UNKNOWN_TOPIC_OR_PARTITION, which a KRaft broker answers for a moment after a create.
        waitForLeaders: false,
        topics: missing.map((topic) => ({ topic, numPartitions: this.partitions, replicationFactor: this.opts.replicationFactor ?? 1 })),
      });
    } catch (err) {
      // Another process may have created them meanwhile; a refusal (a replication factor the cluster cannot meet, say) is an error.
      const now = new Set(await admin.listTopics());
      if (!isMetadataLag(err) && missing.some((t) => !now.has(t))) throw err;
      createError = err;
    }
    await this.waitForLeaders(admin, missing, createError);
  }

  /** Until every partition of the topics has a leader: a publish or a subscription right after a create then finds them. */
  private async waitForLeaders(admin: Admin, topics: string[], createError: unknown): Promise<void> {
    const deadline = Date.now() + TOPIC_LEADERS_WAIT_MS;
    let lastError: unknown = createError;
    for (;;) {
      try {
        const { topics: found } = await admin.fetchTopicMetadata({ topics });
        const led = found.length === topics.length && found.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0));
        if (led) return;
      } catch (err) {
        if (!isMetadataLag(err)) throw createError ?? err;
        lastError = err;
      }
      if (Date.now() > deadline) throw lastError ?? new Error(`topics ${topics.join(", ")} have no leaders after ${TOPIC_LEADERS_WAIT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async ping(): Promise<void> {
    const admin = await this.getAdmin();
    await admin.describeCluster();
  }

  async close(): Promise<void> {
    for (const stop of [...this.subscriptions]) await stop().catch(() => {});
    await this.producer?.disconnect().catch(() => {});
    await this.admin?.disconnect().catch(() => {});
  }
}
