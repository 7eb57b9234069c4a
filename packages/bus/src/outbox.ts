import { create, toBinary, fromBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { eventsV1 } from "@c402/contracts";
import { sql, type ExpressionBuilder, type Kysely, type Migration, type QueryCreator } from "@c402/db";
import { failpoint } from "@c402/failpoints";
import { newId } from "@c402/ids";
import { oncePerScrape, outboxOldestAge, outboxUnpublished } from "@c402/metrics";
import { currentContext, newRequestId, runWithContext, type RequestContext } from "@c402/request-context";
import { openSpan, SpanKind, type OpenSpan } from "@c402/tracing";
import { TRACE_HEADERS, type Bus, type BusMessage } from "./bus";

/**
 * Transactional outbox. An emitting service writes the event row in the same
 * transaction as the state change (enqueueEvent). The relay leases a batch of
 * unpublished rows (FOR UPDATE SKIP LOCKED, in a short transaction), publishes
 * them (acks=all) with no transaction open — no row lock is held across a
 * network call, and the embedded bus can write to the same database — then
 * marks them published. A crash anywhere re-publishes once the lease lapses,
 * never loses: consumers dedupe on the event id.
 *
 * `outboxMigration` is the outbox table, defined once: every service that
 * emits includes it among its own migrations (its store/migrations/, under a
 * name it never changes), so the table lives in that service's schema (ADR 3).
 */
export const outboxMigration: Migration = {
  async up(db) {
    await db.schema
      .createTable("outbox")
      .addColumn("seq", "bigserial", (c) => c.primaryKey())
      .addColumn("event_id", "text", (c) => c.notNull().unique())
      .addColumn("topic", "text", (c) => c.notNull())
      .addColumn("key", "text", (c) => c.notNull())
      .addColumn("payload", "bytea", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn("published_at", "timestamptz")
      .addColumn("leased_until", "timestamptz")
      .execute();
    await db.schema.createIndex("outbox_unpublished").on("outbox").column("seq").where(sql.ref("published_at"), "is", null).execute();
  },
};

export interface OutboxEvent {
  topic: string;
  type: string;
  accountId: string;
  testMode: boolean;
  aggregateId: string;
  payload: Uint8Array;
  occurredAt?: Date;
}

/** An event as its outbox row: the envelope (with a fresh event id), its topic and key. */
export interface OutboxRow {
  event_id: string;
  topic: string;
  key: string;
  payload: Buffer;
}

export function outboxRow(event: OutboxEvent): OutboxRow {
  const eventId = newId("event");
  // The request that caused the event travels with it, for the consumers' traces and log lines.
  const cause = currentContext();
  const envelope = create(eventsV1.EventEnvelopeSchema, {
    traceparent: cause?.traceparent ?? "",
    requestId: cause?.requestId ?? "",
    eventId,
    type: event.type,
    occurredAt: timestampFromDate(event.occurredAt ?? new Date()),
    accountId: event.accountId,
    testMode: event.testMode,
    aggregateId: event.aggregateId,
    payload: event.payload,
  });
  return { event_id: eventId, topic: event.topic, key: event.aggregateId, payload: Buffer.from(toBinary(eventsV1.EventEnvelopeSchema, envelope)) };
}

/** Writes the event in the caller's transaction; returns its event id. */
export function enqueueEvent(trx: Kysely<any>, event: OutboxEvent): Promise<string> {
  return enqueueOutboxRow(trx, outboxRow(event));
}

/** Writes an event already built as its outbox row, in the caller's transaction; returns its event id. */
export async function enqueueOutboxRow(trx: Kysely<any>, row: OutboxRow): Promise<string> {
  await trx.insertInto("outbox").values(row).execute();
  return row.event_id;
}

/**
 * The event's outbox insert as a common table expression of the statement
 * that makes the change, written only when the change's CTE `changed` yields a
 * row: the change and its event commit together in one statement, with no
 * transaction around them. Use as `db.with("changed", change).with("event",
 * eventAfter("changed", row)).selectFrom("changed")…`.
 */
export function eventAfter(changed: string, row: OutboxRow) {
  return (db: QueryCreator<any>) =>
    db
      .insertInto("outbox")
      .columns(["event_id", "topic", "key", "payload"])
      .expression(
        db
          .selectFrom(changed)
          .select([
            sql<string>`${row.event_id}::text`.as("event_id"),
            sql<string>`${row.topic}::text`.as("topic"),
            sql<string>`${row.key}::text`.as("key"),
            sql<Buffer>`${row.payload}::bytea`.as("payload"),
          ])
          .limit(1),
      );
}

export function decodeEnvelope(value: Uint8Array): eventsV1.EventEnvelope {
  return fromBinary(eventsV1.EventEnvelopeSchema, value);
}

/** The producer span of one event, in the trace of the request that caused it. */
function publishSpan(topic: string, value: Uint8Array): OpenSpan {
  let cause: RequestContext | undefined;
  try {
    const envelope = decodeEnvelope(value);
    if (envelope.requestId) cause = { requestId: envelope.requestId, ...(envelope.traceparent ? { traceparent: envelope.traceparent } : {}) };
  } catch {
    // Not an envelope this relay can read: published as it is, without context.
  }
  return openSpan(`${topic} publish`, {
    kind: SpanKind.PRODUCER,
    ...(cause ? { parent: cause } : {}),
    attributes: { "messaging.system": "kafka", "messaging.destination.name": topic },
  });
}

function headersOf(context: RequestContext | undefined): Record<string, string> | undefined {
  if (!context?.requestId) return undefined;
  return { [TRACE_HEADERS.requestId]: context.requestId, ...(context.traceparent ? { [TRACE_HEADERS.traceparent]: context.traceparent } : {}) };
}

export interface OutboxRelayOptions {
  db: Kysely<any>;
  bus: Bus;
  batchSize?: number;
  /** Poll interval when idle; poke() publishes sooner. */
  intervalMs?: number;
  /** How long a claimed batch stays reserved for this relay before another may take it. */
  leaseSeconds?: number;
  /** The service whose outbox this is: names its lag in the metrics while the relay runs. */
  service?: string;
  /**
   * How long a published row is kept (what left, and when, stays readable for a while), in
   * seconds; then it is deleted. Default 7 days, Kafka's own default retention.
   */
  retainPublishedSeconds?: number;
  /** The least time between the starts of two rounds, so that the commits meanwhile share one (ROUND_SPACING_MS). */
  roundSpacingMs?: number;
  /** How often a round also deletes the rows past their retention; default every minute. */
  pruneIntervalMs?: number;
  onError?: (err: unknown) => void;
}

/**
 * 50 ms between the starts of two relay rounds at least: at the embedded paid
 * path's rate that is about 20 events a round instead of 8, and each round's
 * statements (the lease, the publish, the mark, each consumer group's fetch
 * and webhooks' record) cost about 3.5 ms of the embedded process's one event
 * loop whatever their events (bench/README.md, 2026-12-04). An event waits at
 * most that much longer.
 */
export const ROUND_SPACING_MS = 50;

/** Published rows deleted per statement, and at most per round (the rest wait for the next round, so publishing never waits long). */
const PRUNE_BATCH = 1_000;
const PRUNE_BATCHES_PER_ROUND = 10;

export class OutboxRelay {
  private timer?: NodeJS.Timeout;
  private due = false; // a round is set for the next turn of timers
  private running = false;
  private again = false;
  private stopped = true;
  private idle: Promise<void> = Promise.resolve();
  private unregister: (() => void)[] = [];
  /** When a round next deletes the rows past their retention (0: the first round does). */
  private nextPrune = 0;
  /** When the last round started (Date.now()). */
  private lastRoundAt = 0;

  constructor(private readonly opts: OutboxRelayOptions) {}

  start(): void {
    this.stopped = false;
    const service = this.opts.service;
    if (service) {
      const lag = oncePerScrape(() => this.lag());
      this.unregister = [
        outboxUnpublished.source(async () => [{ labels: { service }, value: (await lag()).waiting }]),
        outboxOldestAge.source(async () => [{ labels: { service }, value: (await lag()).oldestSeconds }]),
      ];
    }
    this.poke();
  }

  /** Events not yet on the bus, and the age of the oldest in seconds: the outbox's lag. */
  async lag(): Promise<{ waiting: number; oldestSeconds: number }> {
    const row = await this.opts.db
      .selectFrom("outbox")
      .select([sql<bigint | number>`count(*)`.as("waiting"), sql<string | null>`extract(epoch from now() - min(created_at))`.as("oldest")])
      .where("published_at", "is", null)
      .executeTakeFirst();
    return { waiting: Number(row?.waiting ?? 0), oldestSeconds: Math.max(0, Number(row?.oldest ?? 0)) };
  }

  /**
   * Asks for a publish round soon (after a commit that enqueued events). The
   * round starts on the event loop's next turn of timers, and no sooner than
   * `roundSpacingMs` after the last round started, not at once: the commits of
   * concurrent requests made meanwhile share it (one lease, one publish, one
   * mark for all of them, and one fetch for each consumer group), where a round
   * started inside each commit would find that commit's event alone and cost
   * three statements per event. An event waits at most the spacing: a
   * millisecond when no round started in the last `roundSpacingMs`; under load
   * the whole spacing, and the batch grows with it.
   */
  poke(): void {
    if (this.stopped || this.due) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.due = true;
    const spacing = this.opts.roundSpacingMs ?? ROUND_SPACING_MS;
    this.timer = setTimeout(
      () => {
        this.due = false;
        this.round();
      },
      Math.max(0, this.lastRoundAt + spacing - Date.now()),
    );
  }

  private round(): void {
    if (this.stopped) return;
    this.running = true;
    this.lastRoundAt = Date.now();
    // The round serves every request's events, not the one whose commit poked it: its log lines get an id of their own.
    this.idle = runWithContext({ requestId: newRequestId() }, () => this.drain()).finally(() => {
      this.running = false;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.poke();
      } else {
        this.timer = setTimeout(() => this.poke(), this.opts.intervalMs ?? 500);
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      // A short batch means the outbox was empty when it was leased; a later commit pokes again.
      const limit = this.opts.batchSize ?? 100;
      while (!this.stopped && (await this.publishBatch()) >= limit);
      if (!this.stopped && Date.now() >= this.nextPrune) {
        const caughtUp = (await this.prunePublished()).caughtUp;
        // Rows still past their retention are deleted by the next round, after its publishing.
        this.nextPrune = caughtUp ? Date.now() + (this.opts.pruneIntervalMs ?? 60_000) : 0;
        if (!caughtUp) this.again = true;
      }
    } catch (err) {
      this.opts.onError?.(err);
    }
  }

  /**
   * Deletes published rows past their retention, oldest first, up to ten
   * statements of 1,000: without it the table (and every backup of it) grows by
   * every event the service ever emitted. Each statement looks only at the
   * 1,000 oldest rows (the primary key's first pages, whatever the table's
   * size) and deletes those of them published before the retention: never an
   * unpublished row, however old. `caughtUp` is false when rows past their
   * retention may remain.
   */
  async prunePublished(): Promise<{ deleted: number; caughtUp: boolean }> {
    const retainSeconds = this.opts.retainPublishedSeconds ?? 7 * 24 * 3600;
    let deleted = 0;
    for (let batch = 0; batch < PRUNE_BATCHES_PER_ROUND; batch++) {
      const result = await this.opts.db
        .with("oldest", (db: QueryCreator<any>) => db.selectFrom("outbox").select(["seq", "published_at"]).orderBy("seq").limit(PRUNE_BATCH))
        .deleteFrom("outbox")
        .where("seq", "in", (eb: ExpressionBuilder<any, "outbox">) =>
          eb
            .selectFrom("oldest")
            .select("oldest.seq")
            .where("oldest.published_at", "<", sql<Date>`now() - make_interval(secs => ${retainSeconds})`),
        )
        .executeTakeFirst();
      const count = Number(result.numDeletedRows);
      deleted += count;
      // Nothing more among the oldest: every row left is young or unpublished.
      if (count === 0) return { deleted, caughtUp: true };
    }
    return { deleted, caughtUp: false };
  }

  /** Publishes one batch; returns how many events it published. */
  async publishBatch(): Promise<number> {
    const limit = this.opts.batchSize ?? 100;
    const leaseSeconds = this.opts.leaseSeconds ?? 10;
    // One statement leases the batch: rows another relay holds are skipped, not waited for.
    const leased = await this.opts.db
      .updateTable("outbox")
      .set({ leased_until: sql`now() + make_interval(secs => ${leaseSeconds})` })
      .where("seq", "in", (eb: ExpressionBuilder<any, "outbox">) =>
        eb
          .selectFrom("outbox")
          .select("seq")
          .where("published_at", "is", null)
          .where((w: ExpressionBuilder<any, "outbox">) => w.or([w("leased_until", "is", null), w("leased_until", "<", sql<Date>`now()`)]))
          .orderBy("seq")
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .returning(["seq", "topic", "key", "payload"])
      .execute();
    if (leased.length === 0) return 0;
    const rows = leased.sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
    const spans: OpenSpan[] = [];
    try {
      const byTopic = new Map<string, BusMessage[]>();
      for (const r of rows) {
        const list = byTopic.get(r.topic) ?? [];
        const value = new Uint8Array(r.payload);
        const span = publishSpan(r.topic, value);
        spans.push(span);
        list.push({ key: r.key, value, headers: headersOf(span.context) });
        byTopic.set(r.topic, list);
      }
      for (const [topic, messages] of byTopic) await this.opts.bus.publish(topic, messages);
      for (const span of spans) span.end();
    } catch (err) {
      for (const span of spans) span.end(err);
      // Give the rows back at once so the next round retries them.
      await this.opts.db
        .updateTable("outbox")
        .set({ leased_until: null })
        .where(
          "seq",
          "in",
          rows.map((r) => r.seq),
        )
        .execute();
      throw err;
    }
    failpoint("after-outbox-publish");
    await this.opts.db
      .updateTable("outbox")
      .set({ published_at: sql`now()`, leased_until: null })
      .where(
        "seq",
        "in",
        rows.map((r) => r.seq),
      )
      .execute();
    return rows.length;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const remove of this.unregister) remove();
    this.unregister = [];
    clearTimeout(this.timer);
    this.due = false;
    await this.idle;
  }
}

/** Processed-event bookkeeping for idempotent consumers, in the consumer's schema. */
export const processedEventsMigration: Migration = {
  async up(db) {
    await db.schema
      .createTable("processed_events")
      .addColumn("consumer", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("processed_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addPrimaryKeyConstraint("processed_events_pk", ["consumer", "event_id"])
      .execute();
  },
};

/**
 * Wraps an effect so that it applies at most once per event id: the processed
 * row and the effect commit in one transaction, and a redelivered event finds
 * the row and does nothing. Events for which `ignore` answers true have no
 * effect on this consumer and are acknowledged without touching the database.
 */
export function idempotentConsumer(
  db: Kysely<any>,
  consumer: string,
  apply: (trx: Kysely<any>, envelope: eventsV1.EventEnvelope) => Promise<void>,
  opts: { ignore?: (envelope: eventsV1.EventEnvelope) => boolean } = {},
): (message: { value: Uint8Array }) => Promise<void> {
  return async (message) => {
    const envelope = decodeEnvelope(message.value);
    if (opts.ignore?.(envelope)) return;
    await db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto("processed_events")
        .values({ consumer, event_id: envelope.eventId })
        .onConflict((oc) => oc.columns(["consumer", "event_id"]).doNothing())
        .returning("event_id")
        .executeTakeFirst();
      if (!inserted) return;
      await apply(trx, envelope);
    });
  };
}
