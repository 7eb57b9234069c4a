import type { AddressInfo } from "node:net";
import { MemoryCache, RedisCache, type Cache } from "@c402/cache";
import { createLogger } from "@c402/logging";
import { describeWith, infraAvailable, uniqueName } from "@c402/testkit";
import express, { type RequestHandler } from "express";
import { errorHandler } from "../src/http/problems";
import { rateLimit, spendFrom } from "../src/http/rate-limit";

async function serveWith(limited: RequestHandler) {
  const app = express();
  app.post("/limited", limited, (_req, res) => void res.json({ ok: true }));
  app.use(errorHandler("https://site.test", createLogger({ service: "t", level: "silent" }), "c402"));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/limited`, close: () => new Promise((r) => server.close(r)) };
}

const serve = (cache: Cache, limit: number, name = "t") => serveWith(rateLimit(cache, { name, limit, windowSeconds: 60 }));

describe("rate limiting", () => {
  it("admits the limit, then answers 429 with Retry-After", async () => {
    const s = await serve(new MemoryCache(), 2);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await fetch(s.url, { method: "POST" }));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 429]);
    expect(answers.map((r) => r.headers.get("x-ratelimit-remaining"))).toEqual(["1", "0", "0"]);
    for (const r of answers) {
      expect(r.headers.get("x-ratelimit-limit")).toBe("2");
      expect(Number(r.headers.get("x-ratelimit-reset"))).toBeGreaterThan(0);
      expect(Number(r.headers.get("x-ratelimit-reset"))).toBeLessThanOrEqual(60);
    }
    const refused = answers[2] as Response;
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(((await refused.json()) as { type: string }).type).toBe("https://site.test/problems/rate-limited");
    await s.close();
  });

  it("spends a key's own budget with spendFrom", async () => {
    const cache = new MemoryCache();
    const perKey = cache.limiter({ name: "per-key", limit: 2, windowSeconds: 60 });
    const s = await serveWith(async (req, res, next) => {
      await spendFrom(perKey, res, req.header("x-key") ?? "none");
      next();
    });
    const call = (key: string) => fetch(s.url, { method: "POST", headers: { "x-key": key } });
    const a = [(await call("a")).status, (await call("a")).status];
    const refused = await call("a");
    expect([...a, refused.status]).toEqual([200, 200, 429]);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    // Another key has its budget whole.
    const b = await call("b");
    expect(b.status).toBe(200);
    expect(b.headers.get("x-ratelimit-remaining")).toBe("1");
    await s.close();
  });

  it("fails closed with a 503 problem when the counter store is unreachable", async () => {
    const cache = new RedisCache("redis://127.0.0.1:1");
    const s = await serve(cache, 5);
    const res = await fetch(s.url, { method: "POST" });
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(((await res.json()) as { type: string }).type).toBe("https://site.test/problems/unavailable");
    await s.close();
    await cache.close();
  });
});

describeWith("redis")("rate limiting across replicas, through Redis", () => {
  it("two gateways sharing Redis admit exactly the limit between them", async () => {
    const prefix = `c402test:${uniqueName("rl")}:`;
    const caches = [new RedisCache(infraAvailable("redis") as string, prefix), new RedisCache(infraAvailable("redis") as string, prefix)];
    const servers = await Promise.all(caches.map((c) => serve(c, 10)));
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => fetch((servers[i % 2] as { url: string }).url, { method: "POST" }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    await Promise.all(servers.map((s) => s.close()));
    await Promise.all(caches.map((c) => c.close()));
  });
});
