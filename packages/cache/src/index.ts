import { createClient, type RedisClientType } from "redis";

/**
 * Short-lived shared state for the gateway: cached values and fixed-window
 * counters for rate limits. Redis in distributed mode (shared by every gateway
 * replica), a process-local map in embedded mode. Nothing durable lives here.
 */
export interface Cache {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  /** Counts one hit in the current fixed window of `windowSeconds`. */
  hit(key: string, windowSeconds: number): Promise<WindowCount>;
  /** The current window of a `hit` counter without counting; null when no window is open. */
  peek(key: string): Promise<WindowCount | null>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface WindowCount {
  count: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export class MemoryCache implements Cache {
  private readonly values = new Map<string, { value: string; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async get(key: string): Promise<string | null> {
    const entry = this.values.get(key);
    if (!entry) return null;
    if (entry.expiresAt <= this.now()) {
      this.values.delete(key);
      return null;
    }
    return entry.value;
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    this.values.set(key, { value, expiresAt: this.now() + ttlSeconds * 1000 });
    if (this.values.size > 100_000) this.sweep();
  }

  async hit(key: string, windowSeconds: number): Promise<WindowCount> {
    const now = this.now();
    const entry = this.values.get(key);
    if (!entry || entry.expiresAt <= now) {
      this.values.set(key, { value: "1", expiresAt: now + windowSeconds * 1000 });
      return { count: 1, resetSeconds: windowSeconds };
    }
    const count = Number(entry.value) + 1;
    entry.value = String(count);
    return { count, resetSeconds: Math.max(1, Math.ceil((entry.expiresAt - now) / 1000)) };
  }

  async peek(key: string): Promise<WindowCount | null> {
    const now = this.now();
    const entry = this.values.get(key);
    if (!entry || entry.expiresAt <= now) return null;
    return { count: Number(entry.value), resetSeconds: Math.max(1, Math.ceil((entry.expiresAt - now) / 1000)) };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.values.clear();
  }

  private sweep(): void {
    const now = this.now();
    for (const [k, v] of this.values) if (v.expiresAt <= now) this.values.delete(k);
  }
}

export class RedisCache implements Cache {
  private readonly client: RedisClientType;
  private connecting?: Promise<unknown>;
  private everConnected = false;

  constructor(
    url: string,
    private readonly prefix = "c402:",
  ) {
    this.client = createClient({
      url,
      socket: {
        connectTimeout: 2_000,
        // Reconnect after a lost connection; a first connection that fails is
        // reported to the caller at once (and tried again on the next call).
        reconnectStrategy: (retries) => (this.everConnected ? Math.min(retries * 100, 2_000) : new Error("Redis unreachable")),
      },
      // Fail fast while disconnected instead of queueing requests forever.
      disableOfflineQueue: true,
    });
    this.client.on("error", () => {});
    this.client.on("ready", () => (this.everConnected = true));
  }

  private async ready(): Promise<RedisClientType> {
    if (!this.client.isOpen) {
      this.connecting ??= this.client.connect().catch((err: unknown) => {
        this.connecting = undefined;
        throw err;
      });
    }
    await this.connecting;
    return this.client;
  }

  async get(key: string): Promise<string | null> {
    const c = await this.ready();
    return c.get(this.prefix + key);
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    const c = await this.ready();
    await c.set(this.prefix + key, value, { EX: ttlSeconds });
  }

  async hit(key: string, windowSeconds: number): Promise<WindowCount> {
    const c = await this.ready();
    const k = this.prefix + key;
    const [count, , ttl] = (await c.multi().incr(k).expire(k, windowSeconds, "NX").ttl(k).exec()) as unknown as [number, number, number];
    return { count: Number(count), resetSeconds: Math.max(1, Number(ttl)) };
  }

  async peek(key: string): Promise<WindowCount | null> {
    const c = await this.ready();
    const k = this.prefix + key;
    const [count, ttl] = (await c.multi().get(k).ttl(k).exec()) as unknown as [string | null, number];
    // A key without a TTL (-1) is not a window `hit` opened; treat it as none.
    if (count === null || Number(ttl) < 0) return null;
    return { count: Number(count), resetSeconds: Math.max(1, Number(ttl)) };
  }

  async ping(): Promise<void> {
    const c = await this.ready();
    await c.ping();
  }

  async close(): Promise<void> {
    if (this.client.isOpen) await this.client.quit().catch(() => this.client.destroy());
  }
}
