import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createGuardedFetch, outboundPolicyOf, type GuardedFetch } from "@c402/outbound-http";
import { startFakeMcpServer, type FakeMcpServer } from "@c402/testkit/fake-mcp-server";
import { callMcpTool } from "../src/domain/mcp-call";
import type { OriginCredential } from "../src/domain/origin-keys";
import { callOrigin, relayRequestErrors, type RelayTarget } from "../src/domain/relay-call";

/** The relay's call of a seller's origin (a real HTTP server on loopback) and the charge table the saga will settle by. */

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

describe("calling a relay origin", () => {
  let server: Server;
  let base: string;
  let fetch: GuardedFetch;
  const seen: Seen[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString("utf8")));
      req.on("end", () => {
        seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
        const path = new URL(req.url ?? "/", "http://x").pathname;
        const status = /^\/status\/(\d{3})$/.exec(path);
        if (status) return void res.writeHead(Number(status[1]), { "content-type": "application/json" }).end(JSON.stringify({ status: Number(status[1]) }));
        if (path === "/slow") return; // never answers
        if (path === "/big") {
          res.writeHead(200, { "content-type": "application/octet-stream" });
          const chunk = Buffer.alloc(16 * 1024, 1);
          const pump = () => {
            while (res.write(chunk));
            res.once("drain", pump);
          };
          return pump();
        }
        if (path === "/moved") return void res.writeHead(302, { location: "/status/200" }).end();
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ forecast: "sunny" }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    fetch = createGuardedFetch({ allowLoopback: true, maxResponseBytes: 64 * 1024, timeoutMs: 10_000 });
  });
  afterAll(async () => {
    await fetch.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  const last = () => seen[seen.length - 1] as Seen;
  const get = (path: string, extra: Partial<RelayTarget> = {}): RelayTarget => ({ originUrl: `${base}${path}`, method: "GET", ...extra });

  it("delivers a 2xx with its outcome (status, latency, bytes), passing the buyer's parameters as the query and the credential as its header", async () => {
    const out = await callOrigin(
      fetch,
      get("/weather?units=metric", { credential: { authType: "bearer", headerName: null, value: "origin-token" } }),
      { city: "Paris", days: "2" },
      5_000,
    );
    expect(out).toMatchObject({ kind: "delivered", charged: true, status: 200, contentType: "application/json", bytes: 20 });
    if (out.kind !== "delivered") throw new Error("not delivered");
    expect(JSON.parse(out.body.toString("utf8"))).toEqual({ forecast: "sunny" });
    expect(out.latencyMs).toBeGreaterThanOrEqual(0);
    expect(last()).toMatchObject({ method: "GET", url: "/weather?units=metric&city=Paris&days=2", body: "" });
    expect(last().headers.authorization).toBe("Bearer origin-token");
  });

  it("sends the reserved body parameter as the JSON body of POST, PUT and PATCH, and an api_key credential in its header", async () => {
    for (const method of ["POST", "PUT", "PATCH"] as const) {
      const out = await callOrigin(
        fetch,
        { originUrl: `${base}/orders`, method, credential: { authType: "api_key", headerName: "X-Api-Key", value: "k" } },
        { body: '{"qty":2}', ref: "a" },
        5_000,
      );
      expect(out.kind).toBe("delivered");
      expect(last()).toMatchObject({ method, url: "/orders?ref=a", body: '{"qty":2}' });
      expect(last().headers).toMatchObject({ "content-type": "application/json", "x-api-key": "k" });
    }
    await callOrigin(fetch, { originUrl: `${base}/x`, method: "POST", credential: { authType: "basic", headerName: null, value: "user:pa:ss" } }, {}, 5_000);
    expect(last().headers.authorization).toBe(`Basic ${Buffer.from("user:pa:ss").toString("base64")}`);
  });

  it.each([
    [400, "buyer_error", true],
    [404, "buyer_error", true],
    [422, "buyer_error", true],
    [201, "delivered", true],
    [204, "delivered", true],
    [401, "origin_failed", false],
    [403, "origin_failed", false],
    [429, "origin_failed", false],
    [500, "origin_failed", false],
    [503, "origin_failed", false],
    [405, "origin_failed", false],
    [409, "origin_failed", false],
  ])("classifies an origin %i as %s (charged: %s)", async (status, kind, charged) => {
    const out = await callOrigin(fetch, get(`/status/${status}`), {}, 5_000);
    expect([out.kind, out.charged, out.status]).toEqual([kind, charged, status]);
  });

  it("names why an origin failed: its credential refused, its capacity, its error, an unexpected status", async () => {
    const reason = async (path: string) => {
      const out = await callOrigin(fetch, get(path), {}, 5_000);
      return out.kind === "origin_failed" ? out.reason : out.kind;
    };
    expect(await reason("/status/401")).toBe("origin_refused_credential");
    expect(await reason("/status/403")).toBe("origin_refused_credential");
    expect(await reason("/status/429")).toBe("origin_rate_limited");
    expect(await reason("/status/502")).toBe("origin_error");
    expect(await reason("/status/418")).toBe("unexpected_status");
  });

  it("follows a redirect to the goods, and does not charge for a timeout, an origin that is down, an answer over the size bound, or an address it may not call", async () => {
    expect((await callOrigin(fetch, get("/moved"), {}, 5_000)).kind).toBe("delivered");
    const slow = await callOrigin(fetch, get("/slow"), {}, 300);
    expect([slow.kind, slow.charged, slow.kind === "origin_failed" && slow.reason]).toEqual(["origin_failed", false, "timeout"]);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const down = await callOrigin(fetch, { originUrl: `http://127.0.0.1:${closedPort}/x`, method: "GET" }, {}, 2_000);
    expect(down.kind === "origin_failed" && down.reason).toBe("unreachable");
    const big = await callOrigin(fetch, get("/big"), {}, 5_000);
    expect(big.kind === "origin_failed" && big.reason).toBe("too_large");
    const metadata = await callOrigin(fetch, { originUrl: "http://169.254.169.254/latest", method: "GET" }, {}, 2_000);
    expect(metadata.kind === "origin_failed" && metadata.reason).toBe("blocked");
  });

  it("refuses buyer parameters the origin cannot take, naming each (before any payment)", () => {
    expect(relayRequestErrors(get("/w"), { city: "Paris" })).toEqual([]);
    expect(relayRequestErrors(get("/w"), { body: "{}" })).toEqual([{ field: "params.body", reason: expect.stringContaining("takes GET") }]);
    const post: RelayTarget = { originUrl: `${base}/w?units=metric`, method: "POST" };
    expect(relayRequestErrors(post, { body: "not json" })).toEqual([{ field: "params.body", reason: "must be a JSON text" }]);
    expect(relayRequestErrors(post, { body: JSON.stringify("x".repeat(8000)) })).toEqual([{ field: "params.body", reason: "must be at most 8000 characters" }]);
    expect(relayRequestErrors(post, { units: "imperial" })).toEqual([{ field: "params.units", reason: "is fixed by the seller's origin URL" }]);
    expect(relayRequestErrors(post, { q: "x".repeat(2001) })).toEqual([{ field: "params.q", reason: "must be at most 2000 characters" }]);
    expect(relayRequestErrors(post, Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, "v"])))).toEqual([
      { field: "params", reason: "at most 50 parameters" },
    ]);
  });
});

describe("a relay origin that redirects to a host the buyer names", () => {
  let origin: Server;
  let elsewhere: Server;
  let originBase: string;
  let elsewhereBase: string;
  let fetch: GuardedFetch;
  const atOrigin: Seen[] = [];
  const atElsewhere: Seen[] = [];

  /** Records each request; the origin's /go/<status> redirects to its `next` query parameter (an open redirect), /steal/<status> answers that status. */
  const recording = (log: Seen[]) =>
    createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString("utf8")));
      req.on("end", () => {
        log.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
        const url = new URL(req.url ?? "/", "http://x");
        const go = /^\/go\/(\d{3})$/.exec(url.pathname);
        if (go) return void res.writeHead(Number(go[1]), { location: url.searchParams.get("next") ?? "/" }).end();
        const steal = /^\/steal\/(\d{3})$/.exec(url.pathname);
        const status = steal ? Number(steal[1]) : 200;
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ status }));
      });
    });
  const listen = async (server: Server) => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  beforeAll(async () => {
    origin = recording(atOrigin);
    elsewhere = recording(atElsewhere);
    originBase = await listen(origin);
    elsewhereBase = await listen(elsewhere);
    // As fulfillment builds it (src/index.ts), with loopback allowed as on a developer's machine.
    fetch = createGuardedFetch(outboundPolicyOf({ allowLoopback: true, allowAddresses: [] }));
  });
  afterAll(async () => {
    await fetch.close();
    for (const s of [origin, elsewhere]) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });

  const cases: [redirect: number, method: "GET" | "POST", finalStatus: number, kind: string, charged: boolean][] = [
    [302, "GET", 200, "delivered", true],
    [307, "GET", 404, "buyer_error", true],
    [307, "POST", 200, "delivered", true],
    [302, "POST", 503, "origin_failed", false],
  ];

  it.each<[OriginCredential["authType"], string | null, string]>([
    ["bearer", null, "authorization"],
    ["basic", null, "authorization"],
    ["api_key", "X-Api-Key", "x-api-key"],
    ["custom", "X-Seller-Token", "x-seller-token"],
  ])(
    "an origin_auth_type %s credential (one-off or a stored origin key, the same OriginCredential) reaches the origin but not the host of a 302 or 307 it redirects to; the final answer is charged by the table",
    async (authType, headerName, header) => {
      const value = authType === "basic" ? "seller:upstream-secret" : "upstream-secret";
      const credential: OriginCredential = { authType, headerName, value };
      for (const [redirect, method, finalStatus, kind, charged] of cases) {
        const next = `${elsewhereBase}/steal/${finalStatus}`;
        const [originBefore, elsewhereBefore] = [atOrigin.length, atElsewhere.length];
        const out = await callOrigin(
          fetch,
          { originUrl: `${originBase}/go/${redirect}`, method, credential },
          { next, ...(method === "POST" ? { body: '{"q":1}' } : {}) },
          5_000,
        );
        expect([redirect, method, out.kind, out.charged, out.status]).toEqual([redirect, method, kind, charged, finalStatus]);
        const first = atOrigin.slice(originBefore);
        const second = atElsewhere.slice(elsewhereBefore);
        expect([first.length, second.length]).toEqual([1, 1]);
        // Not vacuous: the origin itself got the credential, and the buyer's parameter named the second host.
        expect((first[0] as Seen).headers[header]).toBeDefined();
        expect((first[0] as Seen).url).toBe(`/go/${redirect}?next=${encodeURIComponent(next)}`);
        const stolen = second[0] as Seen;
        expect([redirect, stolen.url, stolen.headers[header], stolen.headers.authorization, stolen.headers["x-api-key"]]).toEqual([
          redirect,
          `/steal/${finalStatus}`,
          undefined,
          undefined,
          undefined,
        ]);
        expect(JSON.stringify(stolen.headers)).not.toContain(authType === "basic" ? Buffer.from(value).toString("base64") : value);
        expect(stolen.headers.accept).toBe("application/json, */*;q=0.8");
        // 302 turns a POST into a GET without its body; 307 resends both.
        expect([stolen.method, stolen.body]).toEqual(redirect === 307 && method === "POST" ? ["POST", '{"q":1}'] : [redirect === 302 ? "GET" : method, ""]);
      }
    },
  );
});

describe("an MCP server that redirects to another host", () => {
  let redirector: Server;
  let redirectorBase: string;
  let elsewhere: FakeMcpServer;
  let fetch: GuardedFetch;
  const atRedirector: Seen[] = [];

  beforeAll(async () => {
    elsewhere = await startFakeMcpServer({ tools: [{ name: "forecast", inputSchema: { type: "object" }, answer: () => "sunny" }] });
    // The seller's URL answers every request with a 307 to an MCP server on another host (port): the SDK's POST follows it.
    redirector = createServer((req, res) => {
      atRedirector.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: "" });
      req.resume();
      req.on("end", () => res.writeHead(307, { location: elsewhere.url }).end());
    });
    await new Promise<void>((r) => redirector.listen(0, "127.0.0.1", r));
    redirectorBase = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    fetch = createGuardedFetch(outboundPolicyOf({ allowLoopback: true, allowAddresses: [] }));
  });
  afterAll(async () => {
    await fetch.close();
    await elsewhere.close();
    redirector.closeAllConnections();
    await new Promise<void>((r) => redirector.close(() => r()));
  });

  it.each<[OriginCredential["authType"], string | null]>([
    ["bearer", null],
    ["api_key", "X-Api-Key"],
    ["custom", "X-Seller-Token"],
  ])(
    "with a %s credential: the session stops at the redirect (the seller's failure, not charged) and nothing reaches the other host",
    async (authType, headerName) => {
      const credential: OriginCredential = { authType, headerName, value: "upstream-secret" };
      const [redirectorBefore, elsewhereBefore] = [atRedirector.length, elsewhere.requests.length];
      const outcome = await callMcpTool(fetch, { originUrl: `${redirectorBase}/mcp`, fixedTool: "forecast", credential }, {}, 5_000);
      expect(outcome).toMatchObject({ kind: "origin_failed", charged: false, status: 307 });
      // Not vacuous: the seller's URL was asked, with the credential.
      const asked = atRedirector.slice(redirectorBefore);
      expect(asked.length).toBeGreaterThan(0);
      expect(JSON.stringify(asked[0]?.headers)).toContain(authType === "bearer" ? "Bearer upstream-secret" : "upstream-secret");
      expect(elsewhere.requests.slice(elsewhereBefore)).toEqual([]);
      expect(elsewhere.toolCalls).toEqual([]);
    },
  );
});
