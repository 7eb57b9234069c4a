import http from "node:http";
import type { AddressInfo } from "node:net";
import { OutboundRefused, createGuardedFetch, guardedRequest, type GuardedFetch, type OutboundPolicy } from "../src";
import { closeAndCheckLoopbackOnly, installConnectSpy } from "@c402/testkit/outbound-lab";
import { startLab, stubResolver, type Lab } from "@c402/testkit/outbound-lab";

/** Size, time and redirect limits, and the mapping of network failures; loopback only (G20). */
const spy = installConnectSpy();
let lab: Lab;
let base: string;
const resolver = stubResolver({ "origin.test": ["127.0.0.1"] });
// A generous deadline: these tests are about sizes, and a loaded machine decodes a gzip bomb slowly (the timeout tests set their own).
const POLICY: OutboundPolicy = { allowAddresses: ["127.0.0.1"], resolve: resolver.resolve, maxResponseBytes: 1024 * 1024, timeoutMs: 15_000 };
let guarded: GuardedFetch;

beforeAll(async () => {
  lab = await startLab();
  base = `http://origin.test:${lab.port}`;
  guarded = createGuardedFetch(POLICY);
});

afterAll(() => closeAndCheckLoopbackOnly(spy, lab, guarded));

async function rejection(p: Promise<unknown>): Promise<OutboundRefused> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundRefused);
  return err as OutboundRefused;
}

describe("response size", () => {
  it("errors with too-large on a body that never ends, without buffering it", async () => {
    const started = Date.now();
    const res = await guarded(`${base}/forever`);
    expect(res.status).toBe(200);
    const err = await rejection(res.arrayBuffer());
    expect(err.reason).toBe("too-large");
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("counts streamed chunks: a reader sees at most maxResponseBytes before the error", async () => {
    const res = await guarded(`${base}/forever`);
    const reader = res.body!.getReader();
    let received = 0;
    const err = await rejection(
      (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          received += value.byteLength;
        }
      })(),
    );
    expect(err.reason).toBe("too-large");
    expect(received).toBeLessThanOrEqual(1024 * 1024);
  });

  it("refuses a declared Content-Length over the limit before reading the body", async () => {
    expect((await rejection(guarded(`${base}/declared-huge`))).reason).toBe("too-large");
  });

  it("bounds the decoded size: a gzip bomb is too-large", async () => {
    const res = await guarded(`${base}/gzip-bomb`);
    expect((await rejection(res.arrayBuffer())).reason).toBe("too-large");
  });

  it("guardedRequest surfaces too-large as OutboundRefused", async () => {
    expect((await rejection(guardedRequest(guarded, `${base}/forever`))).reason).toBe("too-large");
  });
});

describe("time", () => {
  const quick = () => createGuardedFetch({ ...POLICY, timeoutMs: 300 });

  it("a server that never answers → timeout within timeoutMs", async () => {
    const f = quick();
    const started = Date.now();
    const err = await rejection(f(`${base}/hang`));
    const elapsed = Date.now() - started;
    expect(err.reason).toBe("timeout");
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1_300);
    await f.close();
  });

  it("the deadline covers the body: a trickling body → timeout", async () => {
    const f = quick();
    const started = Date.now();
    const res = await f(`${base}/trickle`);
    expect((await rejection(res.text())).reason).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(1_300);
    await f.close();
  });

  it("the deadline covers the whole redirect chain", async () => {
    const f = quick();
    const err = await rejection(f(`${base}/redirect?to=${encodeURIComponent("/hang")}`));
    expect(err.reason).toBe("timeout");
    await f.close();
  });

  it("a request body stream that stalls → timeout", async () => {
    const f = quick();
    const body = new ReadableStream<Uint8Array>({ pull: () => new Promise<void>(() => {}) });
    const err = await rejection(f(`${base}/echo`, { method: "POST", body, duplex: "half" } as RequestInit));
    expect(err.reason).toBe("timeout");
    await f.close();
  });

  it("a caller's abort rejects with the caller's reason, as fetch does", async () => {
    const controller = new AbortController();
    const p = guarded(`${base}/hang`, { signal: controller.signal });
    const reason = new Error("caller gave up");
    setTimeout(() => controller.abort(reason), 50);
    await expect(p).rejects.toBe(reason);
    const pre = new AbortController();
    pre.abort();
    await expect(guarded(`${base}/ok`, { signal: pre.signal })).rejects.toMatchObject({ name: "AbortError" });
  });
});

describe("redirect limits", () => {
  it("maxRedirects 0 returns the 3xx unfollowed (webhooks)", async () => {
    const f = createGuardedFetch({ ...POLICY, maxRedirects: 0 });
    const before = lab.seen.length;
    const res = await f(`${base}/redirect?status=301&to=${encodeURIComponent("http://127.0.0.2/")}`);
    expect([res.status, res.headers.get("location"), await res.text(), res.redirected]).toEqual([301, "http://127.0.0.2/", "moved", false]);
    expect(lab.seen.length).toBe(before + 1);
    await f.close();
  });

  it("init.redirect 'manual' returns the 3xx; 'error' refuses it", async () => {
    const res = await guarded(`${base}/redirect?to=%2Fok`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect((await rejection(guarded(`${base}/redirect?to=%2Fok`, { redirect: "error" }))).reason).toBe("too-many-redirects");
  });

  it("a 3xx without Location is returned as it is", async () => {
    const res = await guarded(`${base}/redirect?status=302`);
    expect([res.status, await res.text()]).toEqual([302, "moved"]);
  });
});

describe("failures map to unreachable", () => {
  it("ECONNREFUSED", async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await rejection(guarded(`http://127.0.0.1:${port}/`));
    expect([err.reason, err.code]).toEqual(["unreachable", "ECONNREFUSED"]);
  });

  it("ENOTFOUND from the resolver", async () => {
    const err = await rejection(guarded(`http://nowhere.test:${lab.port}/`));
    expect([err.reason, err.code]).toEqual(["unreachable", "ENOTFOUND"]);
  });

  it("a connection reset", async () => {
    expect((await rejection(guarded(`${base}/reset`))).reason).toBe("unreachable");
  });

  it("an empty answer from the resolver", async () => {
    const f = createGuardedFetch({ ...POLICY, resolve: async () => [] });
    expect((await rejection(f(`${base}/ok`))).reason).toBe("unreachable");
    await f.close();
  });

  it("a fetch 'bad port' is bad-url", async () => {
    expect((await rejection(guarded(`http://origin.test:25/`))).reason).toBe("bad-url");
  });

  it("an invalid header value is refused without quoting it", async () => {
    const err = await rejection(guarded(`${base}/ok`, { headers: { authorization: "Bearer secret-in-header\r\nx-injected: 1" } }));
    expect(err.reason).toBe("bad-url");
    expect(err.message).not.toContain("secret-in-header");
  });
});

describe("policy validation", () => {
  it("refuses nonsense limits and allow-list entries at construction", () => {
    expect(() => createGuardedFetch({ timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => createGuardedFetch({ maxRedirects: Number.NaN })).toThrow(/maxRedirects/);
    expect(() => createGuardedFetch({ allowAddresses: ["not-an-ip"] })).toThrow(/allowAddresses/);
  });

  it("allowAddresses cannot open metadata or unspecified addresses", async () => {
    const f = createGuardedFetch({ ...POLICY, allowAddresses: ["169.254.169.254", "0.0.0.0", "127.0.0.1"] });
    expect((await rejection(f("http://169.254.169.254/"))).addressClass).toBe("metadata");
    expect((await rejection(f(`http://0.0.0.0:${lab.port}/`))).addressClass).toBe("unspecified");
    await f.close();
  });
});
