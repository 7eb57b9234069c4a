import { migrate, sql, type Kysely, type MigrationSet, type ServiceDatabase } from "@c402/db";
import { deliverFetched, sleep, type Bus, type BusMessage, type DeadLetterPolicy, type SubscribeOptions, type Subscription } from "./bus";

/**
 * The embedded bus: a durable log in the embedded database (schema `bus`),
 * with a committed offset per topic and consumer group. Same semantics as
 * Kafka here: at-least-once (the offset moves only after the handler
 * succeeded), in order, failing handlers retried until they succeed. A crash
 * loses nothing: unhandled messages are redelivered on the next start.
 * Like Kafka's auto-commit, a busy group commits its offset at most once per
 * OFFSET_COMMIT_MS (and whenever it runs dry or stops), so a crash may also
 * redeliver up to that much already handled traffic, which idempotent
 * consumers absorb.
 *
 * It relies on the embedded database's single session (transactions commit in
 * sequence order), so it is for embedded mode only; distributed mode uses Kafka.
 */
export const databaseBusMigrations: MigrationSet = {
  "0001_bus_log": {
    async up(db) {
      await db.schema
        .createTable("bus_messages")
        .addColumn("seq", "bigserial", (c) => c.primaryKey())
        .addColumn("topic", "text", (c) => c.notNull())
        .addColumn("key", "text", (c) => c.notNull())
        .addColumn("value", "bytea", (c) => c.notNull())
        .addColumn("headers", "jsonb", (c) => c.notNull())
        .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
      await db.schema.createIndex("bus_messages_topic_seq").on("bus_messages").columns(["topic", "seq"]).execute();
      await db.schema
        .createTable("bus_offsets")
        .addColumn("topic", "text", (c) => c.notNull())
        .addColumn("consumer_group", "text", (c) => c.notNull())
        .addColumn("seq", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("bus_offsets_pk", ["topic", "consumer_group"])
        .execute();
    },
  },
};

interface Group {
  topic: string;
  name: string;
  subscribers: Pick<SubscribeOptions, "handler" | "handleMany">[];
  stopped: boolean;
  done?: Promise<void>;
  wake?: () => void;
  /** Something was published since the group last looked. */
  pending?: boolean;
}

const BATCH = 100;
const IDLE_POLL_MS = 500;
const PRUNE_EVERY = 1_000;
const OFFSET_COMMIT_MS = 1_000;

export class DatabaseBus implements Bus {
  private readonly groups = new Map<string, Group>();
  private closed = false;

  private constructor(
    private readonly db: Kysely<any>,
    private readonly onHandlerError: (err: unknown, topic: string, attempt: number) => void,
    private readonly onRoundError: (err: unknown, topic: string) => void,
    private readonly deadLetter: DeadLetterPolicy | undefined,
  ) {}

  /**
   * onHandlerError hears of each failed delivery (retried until handled);
   * onRoundError of a group's failed round of reading, committing or pruning
   * (retried after a pause: the group never stops for it).
   */
  static async open(
    database: ServiceDatabase,
    onHandlerError: (err: unknown, topic: string, attempt: number) => void = () => {},
    onRoundError: (err: unknown, topic: string) => void = () => {},
    deadLetter?: DeadLetterPolicy,
  ): Promise<DatabaseBus> {
    await migrate(database, databaseBusMigrations);
    return new DatabaseBus(database.db, onHandlerError, onRoundError, deadLetter);
  }

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    if (this.closed) throw new Error("bus is closed");
    if (messages.length === 0) return;
    await this.db
      .insertInto("bus_messages")
      .values(messages.map((m) => ({ topic, key: m.key, value: Buffer.from(m.value), headers: JSON.stringify(m.headers ?? {}) })))
      .execute();
    for (const g of this.groups.values()) {
      if (g.topic !== topic) continue;
      g.pending = true;
      g.wake?.();
    }
  }

  async subscribe({ topic, group, handler, handleMany }: SubscribeOptions): Promise<Subscription> {
    const id = `${topic}\u0000${group}`;
    let g = this.groups.get(id);
    if (!g) {
      g = { topic, name: group, subscribers: [], stopped: false };
      this.groups.set(id, g);
    }
    // Members of one group share its offset: each fetch goes to one of them, in turn.
    const subscriber = { handler, ...(handleMany ? { handleMany } : {}) };
    g.subscribers.push(subscriber);
    if (!g.done) {
      await this.db
        .insertInto("bus_offsets")
        .values({ topic, consumer_group: group, seq: 0n })
        .onConflict((oc) => oc.columns(["topic", "consumer_group"]).doNothing())
        .execute();
      g.stopped = false;
      const running = g;
      running.done = this.run(running).finally(() => (running.done = undefined));
    }
    const member = g;
    return {
      stop: async () => {
        member.subscribers = member.subscribers.filter((s) => s !== subscriber);
        if (member.subscribers.length === 0) {
          member.stopped = true;
          member.wake?.();
          await member.done;
          this.groups.delete(id);
        }
      },
    };
  }

  private async run(g: Group): Promise<void> {
    const row = await this.db
      .selectFrom("bus_offsets")
      .select("seq")
      .where("topic", "=", g.topic)
      .where("consumer_group", "=", g.name)
      .executeTakeFirstOrThrow();
    let offset = BigInt(row.seq);
    let committed = offset;
    let committedAt = Date.now();
    const commit = async () => {
      if (offset === committed) return;
      await this.db.updateTable("bus_offsets").set({ seq: offset }).where("topic", "=", g.topic).where("consumer_group", "=", g.name).execute();
      committed = offset;
      committedAt = Date.now();
    };
    let turn = 0;
    let sincePrune = 0;
    const active = () => !g.stopped && !this.closed;
    const idle = () =>
      new Promise<void>((resolve) => {
        g.wake = resolve;
        setTimeout(resolve, IDLE_POLL_MS);
      }).then(() => (g.wake = undefined));

    /** Reads a batch, delivers it, commits and prunes when due; false once the group stops. */
    const round = async (): Promise<boolean> => {
      g.pending = false;
      const batch = await this.db
        .selectFrom("bus_messages")
        .select(["seq", "key", "value", "headers"])
        .where("topic", "=", g.topic)
        .where("seq", ">", offset)
        .orderBy("seq")
        .limit(BATCH)
        .execute();
      if (batch.length === 0) {
        await commit();
        await idle();
        return true;
      }
      const subscriber = g.subscribers[turn++ % g.subscribers.length];
      if (!subscriber || !active()) return false;
      const delivered = await deliverFetched(
        batch.map((m) => ({ topic: g.topic, key: m.key, value: new Uint8Array(m.value), headers: m.headers as Record<string, string> })),
        subscriber,
        () => !active(),
        (err, attempt) => this.onHandlerError(err, g.topic, attempt),
        g.name,
        this.deadLetter ? { policy: this.deadLetter, send: (topic, message) => this.publish(topic, [message]) } : undefined,
        (i) => {
          offset = BigInt(batch[i]!.seq);
          sincePrune++;
        },
      );
      if (!delivered) return false;
      if (Date.now() - committedAt >= OFFSET_COMMIT_MS) await commit();
      if (sincePrune >= PRUNE_EVERY) {
        sincePrune = 0;
        // Prune goes by committed offsets, so this group's own progress counts only once committed.
        await commit();
        await this.prune(g.topic);
      }
      // A short batch was all there was: look again only when something is published (or after the idle poll).
      if (batch.length < BATCH && !g.pending) await idle();
      return true;
    };

    while (active()) {
      try {
        if (!(await round())) break;
      } catch (err) {
        // A failed read, commit or prune: the group goes on from what it handled, after a pause.
        this.onRoundError(err, g.topic);
        await idle();
      }
    }
    await commit().catch((err: unknown) => this.onRoundError(err, g.topic));
  }

  /** Drops messages every group of the topic has handled. */
  private async prune(topic: string): Promise<void> {
    await this.db
      .deleteFrom("bus_messages")
      .where("topic", "=", topic)
      // A subquery of the builder, so it reads this schema's bus_offsets (a raw table name would go by search_path).
      .where(
        "seq",
        "<=",
        this.db
          .selectFrom("bus_offsets")
          .select(sql<bigint>`min(seq)`.as("seq"))
          .where("topic", "=", topic),
      )
      .execute();
  }

  async ensureTopics(): Promise<void> {}

  async ping(): Promise<void> {
    if (this.closed) throw new Error("bus is closed");
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    this.closed = true;
    const running = [...this.groups.values()];
    for (const g of running) g.wake?.();
    await Promise.all(running.map((g) => g.done));
    await sleep(0);
  }
}
