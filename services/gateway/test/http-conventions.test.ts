import type { AddressInfo } from "node:net";
import { MemoryCache, RedisCache } from "@c402/cache";
import { ConfigError, loadConfig } from "@c402/config";
import { createCapturingLogger } from "@c402/logging";
import { DependencyUnavailableError, ProblemError } from "@c402/problems";
import express, { type Express } from "express";
import { gatewayConfigSpec, parseTrustProxy } from "../src/config";
import { errorHandler, notFound } from "../src/http/problems";
import { AuthFailureLimit } from "../src/http/rate-limit";
import { requestContext } from "../src/http/request-context";

async function serve(app: Express) {
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
}

describe("TRUST_PROXY", () => {
  it.each([
    ["none", false],
    ["", false],
    ["loopback", ["loopback"]],
    ["2", 2],
    ["10.0.0.0/8, 127.0.0.1,::1,fd00::/8,uniquelocal", ["10.0.0.0/8", "127.0.0.1", "::1", "fd00::/8", "uniquelocal"]],
  ])("reads %j", (raw, expected) => {
    expect(parseTrustProxy(raw)).toEqual(expected);
  });

  it.each(["true", "0", "256", "10.0.0.0/33", "::1/129", "proxy.local", "10.0.0.1/8/1"])("refuses %j", (raw) => {
    expect(() => parseTrustProxy(raw)).toThrow();
  });

  it("defaults to trusting nobody and names itself when invalid", () => {
    expect(loadConfig(gatewayConfigSpec, {}).trustProxy).toBe(false);
    expect(() => loadConfig(gatewayConfigSpec, { TRUST_PROXY: "everyone" })).toThrow(ConfigError);
    expect(() => loadConfig(gatewayConfigSpec, { TRUST_PROXY: "everyone" })).toThrow(/TRUST_PROXY/);
  });
});

describe("the error handler", () => {
  const { logger, lines } = createCapturingLogger({ service: "t", level: "info" });
  let server: Awaited<ReturnType<typeof serve>>;

  beforeAll(async () => {
    const app = express();
    app.use(requestContext(logger));
    app.get("/boom", () => {
      throw new Error("kaboom");
    });
    app.get("/database-down", () => {
      throw new DependencyUnavailableError("The database could not be reached.", new Error("connect ECONNREFUSED 10.0.0.7:5432"));
    });
    app.get("/library-4xx", () => {
      throw Object.assign(new Error("range not satisfiable"), { status: 416, expose: true });
    });
    app.get("/denied", () => {
      throw new ProblemError("unauthenticated", "no");
    });
    app.post("/only-post", (_req, res) => void res.json({}));
    app.use(notFound);
    app.use(errorHandler("https://site.test", logger, 'c"402'));
    server = await serve(app);
  });
  afterAll(() => server.close());

  it("logs every 5xx with its request id and the error's stack, and answers a bare problem", async () => {
    const res = await fetch(`${server.url}/boom`, { headers: { "x-request-id": "req_test_5xx_1234" } });
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain("kaboom");
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.request_id === "req_test_5xx_1234" && l.level === 50);
    expect(line).toMatchObject({ status: 500, path: "/boom", err: { message: "kaboom", stack: expect.stringContaining("Error: kaboom") } });
  });

  it("answers a dependency's outage 503 unavailable with Retry-After, and logs it with its cause as this service's failure", async () => {
    const res = await fetch(`${server.url}/database-down`, { headers: { "x-request-id": "req_test_503_1234" } });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    const body = await res.text();
    expect(JSON.parse(body)).toMatchObject({ type: "https://site.test/problems/unavailable", status: 503, help: { retry_is_safe: true } });
    expect(body).not.toContain("10.0.0.7");
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.request_id === "req_test_503_1234" && l.level === 50);
    expect(line).toMatchObject({ status: 503, err: { message: expect.stringContaining("connect ECONNREFUSED 10.0.0.7:5432") } });
  });

  it("never turns an error with a 4xx status into a 500", async () => {
    const res = await fetch(`${server.url}/library-4xx`);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
  });

  it("401 carries a Bearer challenge with the realm quoted, invalid_token when a credential was sent", async () => {
    expect((await fetch(`${server.url}/denied`)).headers.get("www-authenticate")).toBe('Bearer realm="c\\"402"');
    expect((await fetch(`${server.url}/denied`, { headers: { authorization: "Bearer x" } })).headers.get("www-authenticate")).toBe(
      'Bearer realm="c\\"402", error="invalid_token"',
    );
  });

  it("405 with Allow, derived from the routes, for a known path; 404 otherwise; every answer nosniff", async () => {
    const wrong = await fetch(`${server.url}/only-post`, { method: "DELETE" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
    expect(wrong.headers.get("x-content-type-options")).toBe("nosniff");
    const get = await fetch(`${server.url}/boom`, { method: "POST" });
    expect(get.headers.get("allow")).toBe("GET, HEAD");
    expect((await fetch(`${server.url}/nope`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("the auth failure limit", () => {
  it("refuses an address or prefix that failed `limit` times with 429 and Retry-After; counts only failures", async () => {
    const limit = new AuthFailureLimit(new MemoryCache(), 2);
    const headers = new Map<string, string>();
    const res = { setHeader: (k: string, v: string) => headers.set(k, v) } as unknown as express.Response;
    const a = { ip: "10.0.0.1", keyPrefix: "sk_test_abcd", read: false };
    await limit.refuseIfOver(a, res, "address");
    await limit.recordFailure(a);
    await limit.refuseIfOver(a, res, "address");
    await limit.recordFailure(a);
    await expect(limit.refuseIfOver(a, res, "address")).rejects.toMatchObject({ slug: "rate-limited" });
    expect(Number(headers.get("Retry-After"))).toBeGreaterThan(0);
    // The prefix is over from any address, and the address with any prefix.
    await expect(limit.refuseIfOver({ ip: "10.0.0.2", keyPrefix: "sk_test_abcd", read: false }, res, "prefix")).rejects.toMatchObject({ slug: "rate-limited" });
    await expect(limit.refuseIfOver({ ip: "10.0.0.2", keyPrefix: "sk_test_abcd", read: false }, res, "address")).resolves.toBeUndefined();
    await expect(limit.refuseIfOver({ ip: "10.0.0.1", read: false }, res, "address")).rejects.toMatchObject({ slug: "rate-limited" });
    await expect(limit.refuseIfOver({ ip: "10.0.0.2", keyPrefix: "sk_test_wxyz", read: false }, res, "prefix")).resolves.toBeUndefined();
  });

  it("fails closed with 503 for a write when the counter store is unreachable", async () => {
    const cache = new RedisCache("redis://127.0.0.1:1");
    const limit = new AuthFailureLimit(cache, 20);
    const res = { setHeader: () => undefined } as unknown as express.Response;
    await expect(limit.refuseIfOver({ ip: "10.0.0.1", read: false }, res, "address")).rejects.toMatchObject({ slug: "unavailable" });
    await expect(limit.recordFailure({ ip: "10.0.0.1", read: false })).rejects.toMatchObject({ slug: "unavailable" });
    await cache.close();
  });

  it("counts a read's failures in this process when the counter store is unreachable, to the same limit", async () => {
    const cache = new RedisCache("redis://127.0.0.1:1");
    const limit = new AuthFailureLimit(cache, 2);
    const res = { setHeader: () => undefined } as unknown as express.Response;
    const read = { ip: "10.0.0.1", keyPrefix: "sk_test_abcd", read: true };
    await expect(limit.refuseIfOver(read, res, "address")).resolves.toBeUndefined();
    await limit.recordFailure(read);
    await limit.recordFailure(read);
    await expect(limit.refuseIfOver(read, res, "address")).rejects.toMatchObject({ slug: "rate-limited" });
    await expect(limit.refuseIfOver(read, res, "prefix")).rejects.toMatchObject({ slug: "rate-limited" });
    await cache.close();
  });
});
