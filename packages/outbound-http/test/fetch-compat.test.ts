import { createGuardedFetch, guardedRequest, type GuardedFetch } from "../src";
import { closeAndCheckLoopbackOnly, installConnectSpy } from "@c402/testkit/outbound-lab";
import { TLS_CERT, startLab, stubResolver, type Lab } from "@c402/testkit/outbound-lab";

/** The guarded fetch is a drop-in WHATWG fetch for allowed origins (MCP SDK, relay, webhooks); loopback only (G20). */
const spy = installConnectSpy();
let lab: Lab;
let base: string;
let guarded: GuardedFetch;

// The MCP SDK's FetchLike: what StreamableHTTPClientTransport accepts as its `fetch` option.
type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

beforeAll(async () => {
  lab = await startLab();
  base = `http://origin.test:${lab.port}`;
  guarded = createGuardedFetch({ allowAddresses: ["127.0.0.1"], resolve: stubResolver({ "origin.test": ["127.0.0.1"] }).resolve, ca: TLS_CERT });
});

afterAll(() => closeAndCheckLoopbackOnly(spy, lab, guarded));

describe("fetch compatibility", () => {
  it("GET JSON: a platform Response with status, headers, url and json()", async () => {
    const fetchLike: FetchLike = guarded;
    const res = await fetchLike(new URL(`${base}/json`));
    expect(res).toBeInstanceOf(Response);
    expect([res.ok, res.status, res.headers.get("content-type"), res.url, res.redirected]).toEqual([true, 200, "application/json", `${base}/json`, false]);
    expect(await res.json()).toEqual({ hello: "world", n: 42 });
  });

  it("POST JSON with headers, as the MCP SDK sends JSON-RPC", async () => {
    const message = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18" } };
    const res = await guarded(`${base}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": "s-1" },
      body: JSON.stringify(message),
    });
    const echo = (await res.json()) as { method: string; body: string; headers: Record<string, string> };
    expect([echo.method, JSON.parse(echo.body), echo.headers["mcp-session-id"], echo.headers["content-type"]]).toEqual([
      "POST",
      message,
      "s-1",
      "application/json",
    ]);
  });

  it("accepts a Request object (method, headers and body taken from it)", async () => {
    const req = new Request(`${base}/echo`, { method: "PUT", headers: { "x-one": "1" }, body: new Uint8Array([104, 105]) });
    const echo = (await (await guarded(req)).json()) as { method: string; body: string; headers: Record<string, string> };
    expect([echo.method, echo.body, echo.headers["x-one"]]).toEqual(["PUT", "hi", "1"]);
  });

  it("streams text/event-stream: the first event arrives while the server still holds the second", async () => {
    const res = await guarded(`${base}/sse`, { headers: { accept: "text/event-stream" } });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("data: one\n\n")) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
    }
    expect(text).not.toContain("two");
    lab.control.releaseSse();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
    }
    expect(text).toBe("event: message\ndata: one\n\nevent: message\ndata: two\n\n");
  });

  it("keeps every Set-Cookie, handles 204 and HEAD", async () => {
    expect((await guarded(`${base}/cookies`)).headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);
    const empty = await guarded(`${base}/nocontent`);
    expect([empty.status, empty.body]).toEqual([204, null]);
    const head = await guarded(`${base}/json`, { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([200, ""]);
  });

  it("works over https with the configured trust anchor", async () => {
    const res = await guarded(`https://origin.test:${lab.tlsPort}/json`);
    expect(await res.json()).toEqual({ hello: "world", n: 42 });
  });

  it("refuses a certificate that does not match the name (no TLS shortcut)", async () => {
    const f = createGuardedFetch({ allowAddresses: ["127.0.0.1"], resolve: async () => [{ address: "127.0.0.1", family: 4 }], ca: TLS_CERT });
    await expect(f(`https://wrong-name.test:${lab.tlsPort}/json`)).rejects.toMatchObject({ reason: "unreachable" });
    await f.close();
  });
});

describe("guardedRequest", () => {
  it("returns status, headers, buffered body, final URL, redirect count and elapsed time", async () => {
    const r = await guardedRequest(guarded, `${base}/redirect?to=${encodeURIComponent("/json")}`, { method: "GET", headers: { accept: "application/json" } });
    expect([r.status, JSON.parse(r.body.toString()), r.finalUrl, r.redirects, r.headers.get("content-type")]).toEqual([
      200,
      { hello: "world", n: 42 },
      `${base}/json`,
      1,
      "application/json",
    ]);
    expect(r.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it("sends a body", async () => {
    const r = await guardedRequest(guarded, `${base}/echo`, { method: "POST", headers: { "content-type": "text/plain" }, body: "payload" });
    expect((JSON.parse(r.body.toString()) as { body: string }).body).toBe("payload");
  });
});
