import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { createClient, type RedisClientType } from "redis";

/**
 * Short-lived shared state for the gateway: cached values and the rate
 * limiters' fixed-window counters (rate-limiter-flexible). Redis in
 * distributed mode (shared by every gateway replica), process-local memory in
 * embedded mode. Nothing durable lives here.
 */
export interface Cache {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  /**
   * The limiter named `name`: at most `limit` requests per key in a fixed
   * window of `windowSeconds` that opens with a key's first request. One
   * instance per name; asking again with another limit or window throws.
   */
  limiter(opts: LimiterOptions): Limiter;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface LimiterOptions {
  /** Names the counters (`<cache prefix>rl:<name>:<key>` in Redis). */
  name: string;
  /** Requests admitted per key and window (a positive integer). */
  limit: number;
  /** The window's length in whole seconds (at least 1). */
  windowSeconds: number;
}

export interface Limiter {
  readonly name: string;
  readonly limit: number;
  readonly windowSeconds: number;
  /** Counts one request against `key`; allowed is false once the window holds more than `limit`. Rejects when the store cannot count (see CountOptions). */
  consume(key: string, opts?: CountOptions): Promise<LimitState>;
  /** The window of `key` without counting (allowed: one more request would be); null when none is open. Rejects when the store cannot read (see CountOptions). */
  peek(key: string, opts?: CountOptions): Promise<LimitState | null>;
}

export interface CountOptions {
  /**
   * What happens while the shared store cannot count: `reject` (the default:
   * the caller fails closed), or `count-in-process`, an insurance limiter with
   * the same limit and window in this process alone (each replica then admits
   * up to the limit, and the counts start afresh when the store is back).
   */
  whenStoreDown?: "reject" | "count-in-process";
}

export interface LimitState {
  allowed: boolean;
  /** Requests counted in the window (after consume, that one included). */
  count: number;
  /** Requests the window still admits. */
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/**
 * A rate-limiter-flexible limiter as a Limiter; `connected` runs before each
 * call (Redis connects lazily). `insurance` counts in this process when the
 * store fails and the caller allows it (CountOptions).
 */
class FlexibleLimiter implements Limiter {
  readonly name: string;
  readonly limit: number;
  readonly windowSeconds: number;

  constructor(
    opts: LimiterOptions,
    private readonly limiter: RateLimiterAbstract,
    private readonly connected: () => Promise<unknown> = async () => undefined,
    private readonly insurance?: RateLimiterAbstract,
  ) {
    this.name = opts.name;
    this.limit = opts.limit;
    this.windowSeconds = opts.windowSeconds;
  }

  consume(key: string, opts: CountOptions = {}): Promise<LimitState> {
    return this.withInsurance(opts, async (limiter) => {
      try {
        return { allowed: true, ...this.window(await limiter.consume(key)) };
      } catch (err) {
        // Over the limit is an answer; anything else is a store failure and propagates (callers fail closed).
        if (err instanceof RateLimiterRes) return { allowed: false, ...this.window(err) };
        throw err;
      }
    });
  }

  peek(key: string, opts: CountOptions = {}): Promise<LimitState | null> {
    return this.withInsurance(opts, async (limiter) => {
      const res = await limiter.get(key);
      // No TTL (Redis -1) or already past it (memory expires lazily): no window open.
      if (res === null || res.msBeforeNext <= 0) return null;
      const window = this.window(res);
      return { allowed: window.remaining > 0, ...window };
    });
  }

  /** `use` on the store's limiter; on the insurance limiter instead when the store fails and `opts` allows it. */
  private async withInsurance<T>(opts: CountOptions, use: (limiter: RateLimiterAbstract) => Promise<T>): Promise<T> {
    try {
      await this.connected();
      return await use(this.limiter);
    } catch (err) {
      if (!this.insurance || opts.whenStoreDown !== "count-in-process") throw err;
      return use(this.insurance);
    }
  }

  private window(res: RateLimiterRes): Omit<LimitState, "allowed"> {
    return {
      count: res.consumedPoints,
      remaining: Math.max(0, this.limit - res.consumedPoints),
      resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
    };
  }
}

/** One limiter per name, so a request does not allocate one and a name cannot count against two budgets. */
class Limiters {
  private readonly byName = new Map<string, Limiter>();

  constructor(private readonly make: (opts: LimiterOptions) => Limiter) {}

  get(opts: LimiterOptions): Limiter {
    const known = this.byName.get(opts.name);
    if (known) {
      if (known.limit !== opts.limit || known.windowSeconds !== opts.windowSeconds) {
        throw new Error(
          `limiter "${opts.name}" already counts ${known.limit} per ${known.windowSeconds} s; asked for ${opts.limit} per ${opts.windowSeconds} s`,
        );
      }
      return known;
    }
    if (!Number.isInteger(opts.limit) || opts.limit < 1) throw new Error(`limiter "${opts.name}": limit must be a positive integer`);
    // Redis windows are whole seconds (EX), and 0 would never expire.
    if (!Number.isInteger(opts.windowSeconds) || opts.windowSeconds < 1) throw new Error(`limiter "${opts.name}": windowSeconds must be a positive integer`);
    const made = this.make(opts);
    this.byName.set(opts.name, made);
    return made;
  }

  clear(): void {
    this.byName.clear();
  }
}

export class MemoryCache implements Cache {
  private readonly values = new Map<string, { value: string; expiresAt: number }>();
  private readonly limiters = new Limiters(
    (opts) => new FlexibleLimiter(opts, new RateLimiterMemory({ keyPrefix: `rl:${opts.name}`, points: opts.limit, duration: opts.windowSeconds })),
  );

  /** `now` is the clock of get/set; the limiters count on the library's (Date.now). */
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

  limiter(opts: LimiterOptions): Limiter {
    return this.limiters.get(opts);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.values.clear();
    this.limiters.clear();
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
  private readonly limiters = new Limiters(
    (opts) =>
      new FlexibleLimiter(
        opts,
        new RateLimiterRedis({
          storeClient: this.client,
          useRedisPackage: true,
          // While reconnecting, refuse at once rather than wait: callers fail closed.
          rejectIfRedisNotReady: true,
          // The library adds the ":" before the key.
          keyPrefix: `${this.prefix}rl:${opts.name}`,
          points: opts.limit,
          duration: opts.windowSeconds,
        }),
        () => this.ready(),
        new RateLimiterMemory({ keyPrefix: `rl:${opts.name}`, points: opts.limit, duration: opts.windowSeconds }),
      ),
  );

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

  limiter(opts: LimiterOptions): Limiter {
    return this.limiters.get(opts);
  }

  async ping(): Promise<void> {
    const c = await this.ready();
    await c.ping();
  }

  async close(): Promise<void> {
    if (!this.client.isOpen) return;
    // QUIT would wait forever for the reply of a connection being re-established.
    if (!this.client.isReady) return this.client.destroy();
    await this.client.quit().catch(() => this.client.destroy());
  }
}
