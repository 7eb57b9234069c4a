import net from "node:net";
import { describeWith, infraAvailable, uniqueName } from "@c402/testkit";
import { MemoryCache, RedisCache, type Cache } from "../src";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function cacheContract(make: () => Cache) {
  let cache: Cache;
  beforeAll(() => {
    cache = make();
  });
  afterAll(() => cache.close());

  it("stores and expires values", async () => {
    const key = uniqueName("v");
    expect(await cache.get(key)).toBeNull();
    await cache.set(key, "hello", 60);
    expect(await cache.get(key)).toBe("hello");
  });

  it("counts requests in a fixed window", async () => {
    const limiter = cache.limiter({ name: uniqueName("count"), limit: 10, windowSeconds: 60 });
    const states = [];
    for (let i = 0; i < 5; i++) states.push(await limiter.consume("k"));
    expect(states.map((s) => s.count)).toEqual([1, 2, 3, 4, 5]);
    expect(states.map((s) => s.remaining)).toEqual([9, 8, 7, 6, 5]);
    expect(states.every((s) => s.allowed && s.resetSeconds > 0 && s.resetSeconds <= 60)).toBe(true);
    // Keys count apart.
    expect((await limiter.consume("other")).count).toBe(1);
  });

  it("refuses once the window holds more than the limit, still reporting the count", async () => {
    const limiter = cache.limiter({ name: uniqueName("limit"), limit: 3, windowSeconds: 60 });
    const states = [];
    for (let i = 0; i < 5; i++) states.push(await limiter.consume("k"));
    expect(states.map((s) => s.allowed)).toEqual([true, true, true, false, false]);
    expect(states.map((s) => s.count)).toEqual([1, 2, 3, 4, 5]);
    expect(states[4]).toMatchObject({ remaining: 0 });
    expect(states[4]?.resetSeconds).toBeGreaterThan(0);
    expect(states[4]?.resetSeconds).toBeLessThanOrEqual(60);
  });

  it("admits exactly the limit of concurrent requests", async () => {
    const limiter = cache.limiter({ name: uniqueName("concurrent"), limit: 10, windowSeconds: 60 });
    const states = await Promise.all(Array.from({ length: 50 }, () => limiter.consume("k")));
    expect(states.filter((s) => s.allowed)).toHaveLength(10);
    expect(states.map((s) => s.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it("peeks at a window without counting", async () => {
    const limiter = cache.limiter({ name: uniqueName("peek"), limit: 3, windowSeconds: 60 });
    expect(await limiter.peek("k")).toBeNull();
    await limiter.consume("k");
    await limiter.consume("k");
    const seen = await limiter.peek("k");
    expect(seen).toMatchObject({ count: 2, remaining: 1, allowed: true });
    expect(seen?.resetSeconds).toBeGreaterThan(0);
    expect(seen?.resetSeconds).toBeLessThanOrEqual(60);
    expect((await limiter.peek("k"))?.count).toBe(2);
    expect((await limiter.consume("k")).count).toBe(3);
    // A full window admits no further request.
    expect(await limiter.peek("k")).toMatchObject({ count: 3, remaining: 0, allowed: false });
  });

  it("starts a new window once one expires", async () => {
    const limiter = cache.limiter({ name: uniqueName("expiry"), limit: 2, windowSeconds: 1 });
    await limiter.consume("k");
    await limiter.consume("k");
    expect((await limiter.consume("k")).allowed).toBe(false);
    await sleep(1_100);
    expect(await limiter.peek("k")).toBeNull();
    expect(await limiter.consume("k")).toMatchObject({ allowed: true, count: 1 });
  });

  it("keeps one limiter per name", () => {
    const name = uniqueName("same");
    const limiter = cache.limiter({ name, limit: 5, windowSeconds: 60 });
    expect(cache.limiter({ name, limit: 5, windowSeconds: 60 })).toBe(limiter);
    expect(() => cache.limiter({ name, limit: 6, windowSeconds: 60 })).toThrow(/already counts 5 per 60/);
    expect(() => cache.limiter({ name: uniqueName("bad"), limit: 5, windowSeconds: 0.5 })).toThrow(/windowSeconds/);
  });

  it("answers ping", async () => {
    await expect(cache.ping()).resolves.toBeUndefined();
  });
}

describe("MemoryCache", () => {
  cacheContract(() => new MemoryCache());

  it("expires values by its clock", async () => {
    let now = 0;
    const cache = new MemoryCache(() => now);
    await cache.set("v", "x", 5);
    now += 5_001;
    expect(await cache.get("v")).toBeNull();
  });
});

describeWith("redis")("RedisCache against a real Redis", () => {
  const prefix = `c402test:${uniqueName("p")}:`;
  cacheContract(() => new RedisCache(infraAvailable("redis") as string, prefix));

  it("keeps counters under <prefix>rl:<name>:<key>", async () => {
    const cache = new RedisCache(infraAvailable("redis") as string, prefix);
    const name = uniqueName("keys");
    await cache.limiter({ name, limit: 5, windowSeconds: 60 }).consume("k");
    // get() reads under the cache's prefix too.
    expect(await cache.get(`rl:${name}:k`)).toBe("1");
    await cache.close();
  });

  it("refuses to count at once while a lost connection is being re-established, and closes meanwhile", async () => {
    // A proxy to the real Redis, closed mid-way: the client reconnects in the background meanwhile.
    const target = new URL(infraAvailable("redis") as string);
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on("error", () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const cache = new RedisCache(`redis://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`, prefix);
    const limiter = cache.limiter({ name: uniqueName("drop"), limit: 5, windowSeconds: 60 });
    expect((await limiter.consume("k")).allowed).toBe(true);
    proxy.close();
    for (const s of sockets) s.destroy();
    await sleep(50);
    await expect(limiter.consume("k")).rejects.toThrow(Error);
    // And closing does not wait for the connection to come back.
    await cache.close();
  });
});

// Needs no Redis: nothing listens on port 1.
describe("RedisCache without a Redis", () => {
  it("fails fast when Redis is unreachable, and counting rejects (callers fail closed)", async () => {
    const cache = new RedisCache("redis://127.0.0.1:1");
    await expect(cache.ping()).rejects.toThrow();
    const limiter = cache.limiter({ name: "down", limit: 5, windowSeconds: 60 });
    await expect(limiter.consume("k")).rejects.toThrow(Error);
    await expect(limiter.peek("k")).rejects.toThrow(Error);
    await cache.close();
  });
});

describe("RedisCache's insurance limiter", () => {
  it("counts in this process while Redis is unreachable, when the caller allows it, with the same limit", async () => {
    const cache = new RedisCache("redis://127.0.0.1:1");
    const limiter = cache.limiter({ name: "insured", limit: 2, windowSeconds: 60 });
    const inProcess = { whenStoreDown: "count-in-process" } as const;
    expect(await limiter.peek("k", inProcess)).toBeNull();
    const counted = [await limiter.consume("k", inProcess), await limiter.consume("k", inProcess), await limiter.consume("k", inProcess)];
    expect(counted.map((s) => [s.allowed, s.count])).toEqual([
      [true, 1],
      [true, 2],
      [false, 3],
    ]);
    expect((await limiter.peek("k", inProcess))?.allowed).toBe(false);
    // Another key has its own window; a caller that does not allow it still fails closed.
    expect((await limiter.consume("other", inProcess)).allowed).toBe(true);
    await expect(limiter.consume("k")).rejects.toThrow(Error);
    await expect(limiter.peek("k", { whenStoreDown: "reject" })).rejects.toThrow(Error);
    await cache.close();
  });
});
