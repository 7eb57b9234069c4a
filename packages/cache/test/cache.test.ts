import { describeWith, infraAvailable, uniqueName } from "@c402/testkit";
import { MemoryCache, RedisCache, type Cache } from "../src";

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

  it("counts hits in a fixed window", async () => {
    const key = uniqueName("w");
    const counts = [];
    for (let i = 0; i < 5; i++) counts.push((await cache.hit(key, 60)).count);
    expect(counts).toEqual([1, 2, 3, 4, 5]);
    const last = await cache.hit(key, 60);
    expect(last.resetSeconds).toBeGreaterThan(0);
    expect(last.resetSeconds).toBeLessThanOrEqual(60);
  });

  it("counts concurrent hits exactly", async () => {
    const key = uniqueName("c");
    const results = await Promise.all(Array.from({ length: 50 }, () => cache.hit(key, 60)));
    expect(results.map((r) => r.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it("peeks at a window without counting", async () => {
    const key = uniqueName("p");
    expect(await cache.peek(key)).toBeNull();
    await cache.hit(key, 60);
    await cache.hit(key, 60);
    const seen = await cache.peek(key);
    expect(seen?.count).toBe(2);
    expect(seen?.resetSeconds).toBeGreaterThan(0);
    expect(seen?.resetSeconds).toBeLessThanOrEqual(60);
    expect((await cache.peek(key))?.count).toBe(2);
    expect((await cache.hit(key, 60)).count).toBe(3);
  });

  it("answers ping", async () => {
    await expect(cache.ping()).resolves.toBeUndefined();
  });
}

describe("MemoryCache", () => {
  cacheContract(() => new MemoryCache());

  it("starts a new window after expiry", async () => {
    let now = 0;
    const cache = new MemoryCache(() => now);
    await cache.hit("k", 10);
    await cache.hit("k", 10);
    now = 10_001;
    expect(await cache.peek("k")).toBeNull();
    expect((await cache.hit("k", 10)).count).toBe(1);
    await cache.set("v", "x", 5);
    now += 5_001;
    expect(await cache.get("v")).toBeNull();
  });
});

describeWith("redis")("RedisCache against a real Redis", () => {
  cacheContract(() => new RedisCache(infraAvailable("redis") as string, `c402test:${uniqueName("p")}:`));

  it("fails fast when Redis is unreachable", async () => {
    const cache = new RedisCache("redis://127.0.0.1:1");
    await expect(cache.ping()).rejects.toThrow();
    await cache.close();
  });
});
