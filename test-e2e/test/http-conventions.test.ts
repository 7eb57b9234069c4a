import { gzipSync } from "node:zlib";
import { baseUrl, call, newCheckout, newSeller, rawRequest } from "../src/http";

/**
 * HTTP as clients expect it: the right 4xx (never a 5xx) for bodies and paths
 * the API cannot take, 405 with Allow, Bearer challenges on 401, nosniff on
 * every answer, and no-store on answers carrying secrets.
 */
async function send(method: string, path: string, body: string | Buffer | undefined, headers: Record<string, string>) {
  const res = await fetch(`${baseUrl()}${path}`, { method, headers: { accept: "application/json", ...headers }, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body: json, text };
}

const problem = (status: number, slug: string) =>
  expect.objectContaining({
    type: expect.stringMatching(new RegExp(`/problems/${slug}$`)),
    status,
    detail: expect.objectContaining({ message: expect.any(String) }),
  });

const challengeBody = JSON.stringify({ address: "0x1", network: "eip155:8453" });

describe("request bodies the API cannot take", () => {
  let key: string;
  beforeAll(async () => {
    key = (await newSeller()).key;
  });

  it("an oversized JSON body is 413 payload-too-large", async () => {
    const big = JSON.stringify({ title: "x".repeat(600 * 1024), price_usd: "1" });
    for (const [path, headers] of [
      ["/auth/wallet/challenge", {}],
      ["/v1/checkouts", { authorization: `Bearer ${key}` }],
    ] as const) {
      const r = await send("POST", path, big, { "content-type": "application/json", ...headers });
      expect(r.status).toBe(413);
      expect(r.body).toEqual(problem(413, "payload-too-large"));
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
  });

  it.each([
    ["text/plain", "text/plain"],
    ["a form", "application/x-www-form-urlencoded"],
    ["XML", "application/xml"],
  ])("a body sent as %s is 415 unsupported-media-type", async (_what, type) => {
    const r = await send("POST", "/auth/wallet/challenge", challengeBody, { "content-type": type });
    expect(r.status).toBe(415);
    expect(r.body).toEqual(problem(415, "unsupported-media-type"));
  });

  it("JSON in another charset than UTF-8 is 415", async () => {
    const r = await send("POST", "/auth/wallet/challenge", challengeBody, { "content-type": "application/json; charset=iso-8859-1" });
    expect(r.status).toBe(415);
    expect(r.body).toEqual(problem(415, "unsupported-media-type"));
  });

  it("an unsupported Content-Encoding (zstd) is 415; a corrupt gzip body is 400; a real gzip body is read", async () => {
    const zstd = await send("POST", "/auth/wallet/challenge", challengeBody, { "content-type": "application/json", "content-encoding": "zstd" });
    expect(zstd.status).toBe(415);
    expect(zstd.body).toEqual(problem(415, "unsupported-media-type"));
    const corrupt = await send("POST", "/auth/wallet/challenge", "certainly not gzip", { "content-type": "application/json", "content-encoding": "gzip" });
    expect(corrupt.status).toBe(400);
    expect(corrupt.body).toEqual(problem(400, "bad-request"));
    const gzip = await send("POST", "/auth/wallet/challenge", gzipSync(challengeBody), { "content-type": "application/json", "content-encoding": "gzip" });
    expect(gzip.status).toBe(422); // read and validated: 0x1 is no address
    expect(gzip.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: "address" })]));
  });

  it("application/*+json bodies are JSON", async () => {
    const r = await send("POST", "/auth/wallet/challenge", challengeBody, { "content-type": "application/merge-patch+json" });
    expect(r.status).toBe(422);
  });
});

describe("paths and methods", () => {
  it.each(["/c/%ZZ", "/r/%ZZ", "/c/%ZZ/test", "/v1/checkouts/%ZZ"])("a malformed percent-escape (%s) is 400 bad-request", async (path) => {
    const s = await newSeller();
    const r = await call("GET", path, { key: s.key });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(problem(400, "bad-request"));
  });

  it("a known path with the wrong method is 405 with Allow listing the path's methods; unknown paths stay 404", async () => {
    const challenge = await call("DELETE", "/auth/wallet/challenge");
    expect(challenge.status).toBe(405);
    expect(challenge.body).toEqual(problem(405, "method-not-allowed"));
    expect(challenge.headers.get("allow")).toBe("POST");
    const checkouts = await call("PUT", "/v1/checkouts");
    expect(checkouts.status).toBe(405);
    expect(checkouts.headers.get("allow")).toBe("GET, HEAD, POST");
    const keys = await call("PATCH", "/v1/keys/key_x");
    expect(keys.status).toBe(405);
    expect(keys.headers.get("allow")).toBe("DELETE");
    expect((await call("DELETE", "/no/such/path")).status).toBe(404);
  });
});

describe("authentication challenges", () => {
  it("401 carries WWW-Authenticate: Bearer realm, with error=invalid_token when a token was sent", async () => {
    const none = await call("GET", "/v1/checkouts");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="c402"');
    for (const authorization of [`Bearer sk_test_${"a".repeat(32)}`, "Bearer sk_test_short", "Basic abc"]) {
      const r = await call("GET", "/v1/checkouts", { headers: { authorization } });
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="c402", error="invalid_token"');
    }
  });
});

describe("response headers", () => {
  it("every answer carries X-Content-Type-Options: nosniff: JSON, problems, the face fast path and raw parser refusals", async () => {
    const s = await newSeller();
    const c = await newCheckout(s.key);
    const answers = [
      await call("GET", "/health"),
      await call("GET", "/nope"),
      await call("GET", `/c/${c.id}`),
      // The second unpaid GET is answered from the quote cache by the socket fast path.
      await call("GET", `/c/${c.id}`),
      await call("POST", "/v1/keys", { key: s.key, body: {} }),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 404, 402, 402, 201]);
    for (const r of answers) expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    const target = new URL(baseUrl());
    const refused = await rawRequest(`GET /health HTTP/1.1\r\nHost: ${target.host}\r\nX-Big: ${"A".repeat(20 * 1024)}\r\nConnection: close\r\n\r\n`);
    expect(refused).toMatch(/^HTTP\/1\.1 431 /);
    expect(refused).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i);
  });

  it("answers carrying a secret are Cache-Control: no-store", async () => {
    const s = await newSeller();
    expect(s.verified.headers.get("cache-control")).toBe("no-store");
    const minted = await call("POST", "/v1/keys", { key: s.key, body: { name: "ci" } });
    expect(minted.status).toBe(201);
    expect(minted.headers.get("cache-control")).toBe("no-store");
  });
});
