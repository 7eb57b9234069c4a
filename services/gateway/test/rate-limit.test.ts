import type { AddressInfo } from "node:net";
import { MemoryCache, RedisCache, type Cache } from "@c402/cache";
import { createLogger } from "@c402/logging";
import express from "express";
import { errorHandler } from "../src/http/problems";
import { rateLimit } from "../src/http/rate-limit";

async function serve(cache: Cache, limit: number) {
  const app = express();
  app.post("/limited", rateLimit(cache, { name: "t", limit, windowSeconds: 60 }), (_req, res) => void res.json({ ok: true }));
  app.use(errorHandler("https://site.test", createLogger({ service: "t", level: "silent" }), "c402"));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/limited`, close: () => new Promise((r) => server.close(r)) };
}

describe("rate limiting", () => {
  it("admits the limit, then answers 429 with Retry-After", async () => {
    const s = await serve(new MemoryCache(), 2);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(s.url, { method: "POST" })).status);
    expect(statuses).toEqual([200, 200, 429]);
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
