import { deliverUntilHandled, type Bus, type BusMessage, type SubscribeOptions, type Subscription } from "./bus";

interface Group {
  offset: number;
  running: boolean;
  stopped: boolean;
  handlers: SubscribeOptions["handler"][];
  wake?: () => void;
}

/**
 * The embedded bus: an in-process log per topic with a cursor per consumer
 * group. Same semantics as Kafka here: at-least-once, in order (one log per
 * topic keeps per-key order trivially), failing handlers retried until they
 * succeed. Messages live in memory only; the outbox tables keep the durable copy.
 */
export class MemoryBus implements Bus {
  private readonly logs = new Map<string, BusMessage[]>();
  private readonly groups = new Map<string, Group>();
  private closed = false;

  constructor(private readonly onHandlerError: (err: unknown, topic: string, attempt: number) => void = () => {}) {}

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    if (this.closed) throw new Error("bus is closed");
    const log = this.log(topic);
    for (const m of messages) log.push({ key: m.key, value: m.value, headers: { ...(m.headers ?? {}) } });
    for (const [id, group] of this.groups) if (id.startsWith(`${topic}\u0000`)) group.wake?.();
  }

  async subscribe({ topic, group, handler }: SubscribeOptions): Promise<Subscription> {
    const id = `${topic}\u0000${group}`;
    let g = this.groups.get(id);
    if (!g) {
      g = { offset: 0, running: false, stopped: false, handlers: [] };
      this.groups.set(id, g);
    }
    // Several members of one group share its cursor: each message goes to one.
    g.handlers.push(handler);
    g.stopped = false;
    if (!g.running) void this.run(topic, g);
    const member = g;
    return {
      stop: async () => {
        member.handlers = member.handlers.filter((h) => h !== handler);
        if (member.handlers.length === 0) {
          member.stopped = true;
          member.wake?.();
        }
      },
    };
  }

  private async run(topic: string, g: Group): Promise<void> {
    g.running = true;
    let turn = 0;
    try {
      while (!g.stopped && !this.closed) {
        const log = this.log(topic);
        if (g.offset >= log.length) {
          await new Promise<void>((resolve) => (g.wake = resolve));
          g.wake = undefined;
          continue;
        }
        const message = log[g.offset] as BusMessage;
        const handler = g.handlers[turn++ % g.handlers.length];
        if (!handler) break;
        const handled = await deliverUntilHandled(
          { topic, ...message },
          handler,
          () => g.stopped || this.closed,
          (err, attempt) => this.onHandlerError(err, topic, attempt),
        );
        if (handled) g.offset++;
      }
    } finally {
      g.running = false;
    }
  }

  async ensureTopics(topics: string[]): Promise<void> {
    for (const t of topics) this.log(t);
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error("bus is closed");
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const g of this.groups.values()) g.wake?.();
  }

  private log(topic: string): BusMessage[] {
    let log = this.logs.get(topic);
    if (!log) {
      log = [];
      this.logs.set(topic, log);
    }
    return log;
  }
}
