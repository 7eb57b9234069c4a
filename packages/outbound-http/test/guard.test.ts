import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { OutboundRefused, createGuardedFetch, guardedRequest, type GuardedFetch, type OutboundPolicy, type RefusalReason } from "../src";
import { installConnectSpy, isLoopbackIp } from "@c402/testkit/outbound-lab";
import { TLS_CERT, startLab, stubResolver, type Lab } from "@c402/testkit/outbound-lab";

/**
 * Target G19: with allowLoopback false, nothing gets the guarded fetch to a canary (127.0.0.2..9,
 * ::1, a unix socket). 127.0.0.1 plays the allowed public origin through `allowAddresses`.
 * Target G20: every connection attempt of the suite, recorded by a net.Socket#connect spy, is loopback.
 */
const spy = installConnectSpy();
const SECRET = "sekret-canary-7f3a";
let lab: Lab;
let P: number;
let T: number;

const resolver = stubResolver({
  "origin.test": ["127.0.0.1"],
  "other.test": ["127.0.0.1"],
  "canary.test": ["127.0.0.3"],
  "canary6.test": ["::1"],
  "mapped.test": ["::ffff:127.0.0.5"],
  "compat.test": ["::127.0.0.6"],
  "zero.test": ["0.0.0.0"],
  "zero6.test": ["::"],
  "imds.test": ["169.254.169.254"],
  "imds6.test": ["fd00:ec2::254"],
  "lan.test": ["10.0.0.1"],
  "garbage.test": ["not-an-address"],
  "mixed.test": ["127.0.0.1", "127.0.0.2"],
  "mixed-rev.test": ["127.0.0.3", "127.0.0.1"],
  "mixed6.test": ["127.0.0.1", "::1"],
  "mixed6-rev.test": ["::1", "127.0.0.1"],
  "testnet-mixed.test": ["192.0.2.10", "127.0.0.4"],
  "testnet-mapped.test": ["192.0.2.10", "::ffff:127.0.0.6"],
  "rebind.test": (n) => (n === 1 ? ["127.0.0.1"] : ["127.0.0.2"]),
  "rebind-later.test": (n) => (n === 1 ? ["127.0.0.1"] : ["127.0.0.7"]),
  "127.0.0.8.nip.io": ["127.0.0.8"],
});

const POLICY: OutboundPolicy = { allowAddresses: ["127.0.0.1", "192.0.2.10"], resolve: resolver.resolve, ca: TLS_CERT, sensitiveHeaders: ["X-Api-Key"] };
let guarded: GuardedFetch;

beforeAll(async () => {
  lab = await startLab();
  P = lab.port;
  T = lab.tlsPort;
  guarded = createGuardedFetch(POLICY);
});

afterEach(() => {
  // Target G19's threshold, after every case rather than only at the end.
  expect(lab.canaryAccepts()).toBe(0);
});

afterAll(async () => {
  await guarded.close();
  await lab.close();
  spy.restore();
});

/** Expects a refusal, and that its message and fields carry neither the credential nor the query. */
async function refused(url: string, reason: RefusalReason, init: RequestInit = {}, fetchFn: GuardedFetch = guarded): Promise<OutboundRefused> {
  const headers = { authorization: `Bearer ${SECRET}`, "x-payment": SECRET, ...(init.headers as Record<string, string>) };
  const err = await fetchFn(url, { ...init, headers }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundRefused);
  const r = err as OutboundRefused;
  expect([url, r.reason]).toEqual([url, reason]);
  expect(`${r.message} ${JSON.stringify(r)} ${r.stack}`).not.toMatch(new RegExp(`${SECRET}|token=`));
  return r;
}

/** The attempts made while `fn` ran. */
async function attemptsDuring(fn: () => Promise<unknown>): Promise<string[]> {
  const mark = spy.records.length;
  await fn();
  return spy.attempts(mark);
}

const hits = (path: string) => lab.seen.filter((s) => s.url === path).length;

describe("G19 the allowed origin works (so the refusals below are not vacuous)", () => {
  it("fetches from the allowed origin by name, by literal and over https", async () => {
    expect(await (await guarded(`http://origin.test:${P}/ok`)).text()).toBe("ok");
    expect(await (await guarded(`http://127.0.0.1:${P}/ok`)).text()).toBe("ok");
    expect(await (await guarded(`http://[::ffff:127.0.0.1]:${P}/ok`)).text()).toBe("ok");
    expect(await (await guarded(`https://origin.test:${T}/ok`)).text()).toBe("ok");
  });
});

describe("G19 stub resolver pointing at canaries", () => {
  it.each([
    ["canary.test", "loopback"],
    ["canary6.test", "loopback"],
    ["mapped.test", "loopback"],
    ["compat.test", "loopback"],
    ["zero.test", "unspecified"],
    ["zero6.test", "unspecified"],
    ["imds.test", "metadata"],
    ["imds6.test", "metadata"],
    ["lan.test", "private"],
    ["garbage.test", "invalid"],
    ["127.0.0.8.nip.io", "loopback"],
  ])("%s is refused as %s, before any connection attempt", async (name, cls) => {
    const attempts = await attemptsDuring(async () => {
      const r = await refused(`http://${name}:${P}/?token=abc`, "blocked-address");
      expect(r.addressClass).toBe(cls);
    });
    expect(attempts).toEqual([]);
  });

  it("refuses every canary address handed out by the resolver", async () => {
    for (const host of lab.canaryHosts) {
      const f = createGuardedFetch({ ...POLICY, resolve: async () => [{ address: host, family: host.includes(":") ? 6 : 4 }] });
      await refused(`http://anything.example:${P}/`, "blocked-address", {}, f);
      await f.close();
    }
  });
});

describe("G19 mixed A/AAAA sets", () => {
  it.each(["mixed.test", "mixed-rev.test", "mixed6.test", "mixed6-rev.test", "testnet-mixed.test", "testnet-mapped.test"])(
    "%s: one loopback answer refuses the whole set, and not even the allowed address is contacted",
    async (name) => {
      const before = lab.seen.length;
      const attempts = await attemptsDuring(() => refused(`http://${name}:${P}/ok`, "blocked-address"));
      expect(attempts).toEqual([]);
      expect(lab.seen.length).toBe(before);
    },
  );
});

describe("G19 DNS rebinding", () => {
  it("a name that passed someone's earlier check is checked again on the address actually connected", async () => {
    // The "validation" at configuration time sees the allowed address ...
    expect(await resolver.resolve("rebind.test")).toEqual([{ address: "127.0.0.1", family: 4 }]);
    // ... the connection resolves again and gets the canary.
    await refused(`http://rebind.test:${P}/ok`, "blocked-address");
  });

  it("a new connection after an allowed one re-resolves and is refused", async () => {
    const f = createGuardedFetch(POLICY);
    // Connection: close forces the next request onto a new connection, hence a new lookup.
    expect(await (await f(`http://rebind-later.test:${P}/close`)).text()).toBe("closing");
    await refused(`http://rebind-later.test:${P}/close`, "blocked-address", {}, f);
    await f.close();
  });
});

describe("G19 literal IPs in every encoding", () => {
  const forms = [
    "127.0.0.2",
    "2130706434",
    "0x7f000002",
    "0X7F000002",
    "017700000002",
    "0177.0.0.2",
    "0x7f.0.0.2",
    "0x7f.0x0.0x0.0x2",
    "127.2",
    "127.0.2",
    "0x7f.2",
    "127.0.0.2.",
    "%31%32%37.0.0.2",
    "１２７.０.０.２",
    "127。0。0。2",
    "[::ffff:127.0.0.2]",
    "[::ffff:7f00:2]",
    "[0:0:0:0:0:ffff:7f00:2]",
    "[::127.0.0.2]",
    "[::ffff:0:127.0.0.2]",
    "[64:ff9b::127.0.0.2]",
    "[2002:7f00:2::1]",
    "[::1]",
    "[0:0:0:0:0:0:0:1]",
    "[::]",
    "0.0.0.0",
    "0",
    "localhost",
    "LOCALHOST.",
    "canary.localhost",
    "169.254.169.254",
    "[fd00:ec2::254]",
  ];
  it.each(forms)("http://%s:P/ is refused before any socket", async (host) => {
    const attempts = await attemptsDuring(() => refused(`http://${host}:${P}/?token=abc`, "blocked-address"));
    expect(attempts).toEqual([]);
  });

  it("https literals are refused too", async () => {
    await refused(`https://127.0.0.2:${P}/`, "blocked-address");
    await refused(`https://[::1]:${P}/`, "blocked-address");
  });
});

describe("G19 userinfo and parser tricks", () => {
  it.each([
    [`http://public.example@127.0.0.2:PORT/`, "bad-url"],
    [`http://public.example:pw@127.0.0.2:PORT/`, "bad-url"],
    [`http://[::1]@public.example/`, "bad-url"],
    [`http://127.0.0.2:PORT#@public.example/`, "blocked-address"],
    [`http://127.0.0.2:PORT?@public.example/`, "blocked-address"],
    [`http://:@127.0.0.2:PORT/`, "blocked-address"],
    [`http://public.example%40127.0.0.2:PORT/`, "bad-url"],
    [`http://public.example:PORT\\@127.0.0.2/`, "unreachable"],
    [`http://public.example#@127.0.0.2:PORT/`, "unreachable"],
    [`http://127.0.0.2:PORT:80/`, "bad-url"],
    [`//127.0.0.2:PORT/`, "bad-url"],
    [`127.0.0.2:PORT`, "bad-url"],
    [`file:///etc/passwd`, "bad-url"],
    [`gopher://127.0.0.2:PORT/_GET`, "bad-url"],
    [`ftp://127.0.0.2:PORT/`, "bad-url"],
    [`data:text/plain,hi`, "bad-url"],
    [`ws://127.0.0.2:PORT/`, "bad-url"],
  ])("%s → %s", async (url, reason) => {
    const attempts = await attemptsDuring(() => refused(url.replace("PORT", String(P)), reason as RefusalReason));
    expect(attempts).toEqual([]);
  });

  it("a Request object pointing at a canary is refused", async () => {
    await expect(guarded(new Request(`http://127.0.0.2:${P}/`, { method: "POST", body: "x" }))).rejects.toMatchObject({ reason: "blocked-address" });
  });
});

describe("G19 redirects", () => {
  const via = (to: string, status = 302) => `http://origin.test:${P}/redirect?status=${status}&to=${encodeURIComponent(to)}`;

  it.each([
    `http://127.0.0.2:PORT/`,
    `http://2130706436:PORT/`,
    `http://[::1]:PORT/`,
    `http://[::ffff:127.0.0.9]:PORT/`,
    `http://canary.test:PORT/`,
    `http://mixed.test:PORT/`,
    `http://localhost:PORT/`,
    `http://169.254.169.254/latest/meta-data/`,
    `http://metadata.google.internal/computeMetadata/v1/`,
  ])("a hop to %s is re-validated and refused", async (template) => {
    const target = template.replace("PORT", String(P));
    const before = hits(`/redirect?status=302&to=${encodeURIComponent(target)}`);
    const attempts = await attemptsDuring(() => refused(via(target), "blocked-address"));
    expect(attempts.every(isLoopbackIp)).toBe(true);
    expect(attempts.filter((ip) => ip !== "127.0.0.1")).toEqual([]);
    expect(hits(`/redirect?status=302&to=${encodeURIComponent(target)}`)).toBe(before + 1);
  });

  it.each([301, 302, 303, 307, 308])("status %i to a canary is refused", async (status) => {
    await refused(via(`http://127.0.0.3:${P}/`, status), "blocked-address", { method: "POST", body: "{}" });
  });

  it("follows at most 5 hops of a 10-hop chain", async () => {
    const before = lab.seen.filter((s) => s.url.startsWith("/chain/")).length;
    await refused(`http://origin.test:${P}/chain/10`, "too-many-redirects");
    expect(lab.seen.filter((s) => s.url.startsWith("/chain/")).length - before).toBe(6);
  });

  it("a 5-hop chain completes, and maxRedirects above 5 is capped at 5", async () => {
    const r = await guardedRequest(guarded, `http://origin.test:${P}/chain/5`);
    expect([r.status, r.body.toString(), r.redirects, r.finalUrl]).toEqual([200, "end of chain", 5, `http://origin.test:${P}/chain/0`]);
    const greedy = createGuardedFetch({ ...POLICY, maxRedirects: 50 });
    await refused(`http://origin.test:${P}/chain/6`, "too-many-redirects", {}, greedy);
    await greedy.close();
  });

  it.each([
    "file:///etc/passwd",
    `ftp://127.0.0.2:PORT/`,
    `gopher://127.0.0.2:PORT/_GET%20/`,
    "data:text/plain,hi",
    "javascript:alert(1)",
    `ws://127.0.0.2:PORT/`,
    "about:blank",
    "http://[",
  ])("a cross-protocol or malformed redirect to %s is refused", async (target) => {
    await refused(via(target.replace("PORT", String(P))), "bad-url");
  });

  it("a redirect carrying userinfo is refused", async () => {
    await refused(via(`http://origin.test@127.0.0.2:${P}/`), "bad-url");
  });

  it("refuses an https → http downgrade without contacting the http origin", async () => {
    const before = lab.seen.length;
    await refused(`https://origin.test:${T}/redirect?to=${encodeURIComponent(`http://origin.test:${P}/ok`)}`, "redirect-downgrade");
    expect(lab.seen.length).toBe(before + 1); // only the https hop
  });

  it("follows https → https, and refuses https → canary", async () => {
    const r = await guardedRequest(guarded, `https://origin.test:${T}/redirect?to=${encodeURIComponent(`https://other.test:${T}/echo`)}`);
    expect([r.status, r.redirects]).toEqual([200, 1]);
    await refused(`https://origin.test:${T}/redirect?to=${encodeURIComponent(`https://127.0.0.2:${P}/`)}`, "blocked-address");
  });

  const credentials = {
    authorization: "Bearer tok",
    cookie: "session=abc",
    "proxy-authorization": "Basic eA==",
    "x-payment": "eyJwYXkiOjF9",
    "payment-signature": "sig",
    "x-api-key": "key",
    "x-keep": "yes",
  };
  const CREDENTIAL_NAMES = ["authorization", "cookie", "proxy-authorization", "x-payment", "payment-signature", "x-api-key"];

  it("drops credential headers on a cross-origin hop, and every other header but the safe ones", async () => {
    const res = await guarded(via(`http://other.test:${P}/echo`), { headers: { ...credentials, accept: "application/json" } });
    const echo = (await res.json()) as { headers: Record<string, string> };
    expect(echo.headers.host).toBe(`other.test:${P}`);
    for (const name of [...CREDENTIAL_NAMES, "x-keep"]) expect([name, echo.headers[name]]).toEqual([name, undefined]);
    expect(echo.headers.accept).toBe("application/json");
  });

  it("keeps credential headers on a same-origin hop", async () => {
    const res = await guarded(via(`/echo`), { headers: credentials });
    const echo = (await res.json()) as { headers: Record<string, string> };
    for (const name of CREDENTIAL_NAMES) expect(echo.headers[name]).toBe(credentials[name as keyof typeof credentials]);
  });

  it("keeps them dropped when a later hop returns to the first origin", async () => {
    const back = `http://other.test:${P}/redirect?to=${encodeURIComponent(`http://origin.test:${P}/echo`)}`;
    const echo = (await (await guarded(via(back), { headers: credentials })).json()) as { headers: Record<string, string> };
    expect(echo.headers.host).toBe(`origin.test:${P}`);
    for (const name of CREDENTIAL_NAMES) expect(echo.headers[name]).toBeUndefined();
  });

  it("drops them on a port change (another origin) and over https", async () => {
    const echo = (await (
      await guarded(`https://origin.test:${T}/redirect?to=${encodeURIComponent(`https://other.test:${T}/echo`)}`, { headers: credentials })
    ).json()) as { headers: Record<string, string> };
    for (const name of CREDENTIAL_NAMES) expect(echo.headers[name]).toBeUndefined();
  });

  it("follows fetch's method rules: 303 → GET without body; 301/302 POST → GET; 307/308 keep method and body", async () => {
    const send = async (status: number, method: string) => {
      const res = await guarded(via("/echo", status), { method, body: '{"a":1}', headers: { "content-type": "application/json" } });
      return (await res.json()) as { method: string; body: string; headers: Record<string, string> };
    };
    const r303 = await send(303, "POST");
    expect([r303.method, r303.body, r303.headers["content-type"]]).toEqual(["GET", "", undefined]);
    expect((await send(301, "POST")).method).toBe("GET");
    expect((await send(302, "POST")).method).toBe("GET");
    const r302put = await send(302, "PUT");
    expect([r302put.method, r302put.body]).toEqual(["PUT", '{"a":1}']);
    const r307 = await send(307, "POST");
    expect([r307.method, r307.body, r307.headers["content-type"]]).toEqual(["POST", '{"a":1}', "application/json"]);
    const r308 = await send(308, "PATCH");
    expect([r308.method, r308.body]).toEqual(["PATCH", '{"a":1}']);
  });
});

describe("G19 a cross-origin redirect carries only safe headers", () => {
  interface Received {
    method: string;
    url: string;
    headers: IncomingHttpHeaders;
    body: string;
  }
  let first: Server;
  let second: Server;
  let A: string;
  let B: string;
  let plain: GuardedFetch;
  const atSecond: Received[] = [];

  /** Answers /hop?status=&to= with that redirect and anything else with what it received; `log` records the requests. */
  function serve(log?: Received[]): Server {
    return createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString("utf8")));
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "http://x");
        const received = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
        log?.push(received);
        if (url.pathname === "/hop") {
          return void res.writeHead(Number(url.searchParams.get("status")), { location: url.searchParams.get("to") ?? "/" }).end();
        }
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(received));
      });
    });
  }
  const listen = async (server: Server) => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  beforeAll(async () => {
    first = serve();
    second = serve(atSecond);
    A = await listen(first);
    B = await listen(second);
    // No sensitiveHeaders: the rule is generic, not a list of credential names.
    plain = createGuardedFetch({ allowAddresses: ["127.0.0.1"] });
  });
  afterAll(async () => {
    await plain.close();
    for (const s of [first, second]) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });

  const secrets = { "x-api-key": "seller-key", "x-custom-token": "seller-custom", authorization: "Bearer seller-bearer" };
  const safe = { accept: "application/json", "user-agent": "c402-test/1" };
  const hop = (status: number, to: string) => `${A}/hop?status=${status}&to=${encodeURIComponent(to)}`;

  it.each([302, 307])(
    "a %i to another port (another origin) delivers accept and user-agent, and none of x-api-key, x-custom-token, authorization",
    async (status) => {
      const res = await plain(hop(status, `${B}/steal`), { headers: { ...secrets, ...safe } });
      const got = (await res.json()) as Received;
      expect([res.status, res.redirected, got.url]).toEqual([200, true, "/steal"]);
      for (const name of Object.keys(secrets)) expect([name, got.headers[name]]).toEqual([name, undefined]);
      expect(got.headers).toMatchObject(safe);
      const last = atSecond[atSecond.length - 1] as Received;
      for (const name of Object.keys(secrets)) expect(last.headers[name]).toBeUndefined();
    },
  );

  it("a 307 POST resends its body with its content-type, and still none of the credentials", async () => {
    const res = await plain(hop(307, `${B}/steal`), {
      method: "POST",
      body: '{"a":1}',
      headers: { ...secrets, ...safe, "content-type": "application/json", "content-language": "fr" },
    });
    const got = (await res.json()) as Received;
    expect([got.method, got.body]).toEqual(["POST", '{"a":1}']);
    expect(got.headers).toMatchObject({ ...safe, "content-type": "application/json", "content-language": "fr" });
    for (const name of Object.keys(secrets)) expect(got.headers[name]).toBeUndefined();
  });

  it("content headers go on only with a body: a cross-origin GET loses a content-type it had no body for", async () => {
    const got = (await (await plain(hop(302, `${B}/steal`), { headers: { ...safe, "content-type": "application/json" } })).json()) as Received;
    expect([got.headers["content-type"], got.headers.accept]).toEqual([undefined, "application/json"]);
  });

  it.each([302, 307])("a same-origin %i keeps every header", async (status) => {
    const res = await plain(hop(status, "/echo"), { headers: { ...secrets, ...safe, "x-keep": "yes" } });
    const got = (await res.json()) as Received;
    expect([res.redirected, got.url]).toEqual([true, "/echo"]);
    expect(got.headers).toMatchObject({ ...secrets, ...safe, "x-keep": "yes" });
  });
});

describe("G19 caller options cannot route around the guard", () => {
  it("ignores socketPath and dispatcher in init", async () => {
    const rogue = new Agent({ connect: { socketPath: lab.unixPath } });
    const init = { socketPath: lab.unixPath, dispatcher: rogue } as unknown as RequestInit;
    expect(await (await guarded(`http://origin.test:${P}/ok`, init)).text()).toBe("ok");
    await refused(`http://127.0.0.2:${P}/`, "blocked-address", init);
    await refused(`http://canary.test:${P}/`, "blocked-address", { dispatcher: new Agent() } as unknown as RequestInit);
    await rogue.close();
  });

  it("ignores proxy environment variables", async () => {
    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, http_proxy: process.env.http_proxy };
    process.env.HTTP_PROXY = process.env.http_proxy = `http://127.0.0.2:${P}`;
    try {
      expect(await (await guarded(`http://origin.test:${P}/ok`)).text()).toBe("ok");
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it("allowLoopback: true is what opens loopback (the embedded-mode switch), and it stays off by default", async () => {
    const laptop = createGuardedFetch({ resolve: resolver.resolve, allowLoopback: true });
    // Reaching a canary here is the point, so use the origin's address rather than a canary.
    expect(await (await laptop(`http://127.0.0.1:${P}/ok`)).text()).toBe("ok");
    await refused(`http://169.254.169.254/`, "blocked-address", {}, laptop);
    await laptop.close();
    const strict = createGuardedFetch({ resolve: resolver.resolve });
    await refused(`http://127.0.0.1:${P}/`, "blocked-address", {}, strict);
    await refused(`http://localhost:${P}/`, "blocked-address", {}, strict);
    await strict.close();
  });
});

describe("G19 outcome", () => {
  it("no canary accepted a connection (127.0.0.2–.9, ::1 when present, unix socket)", () => {
    expect(lab.canaryHosts.length).toBe(lab.hasIpv6 ? 9 : 8);
    expect(lab.canaryAccepts()).toBe(0);
  });

  it("G20: every connection attempt of this suite was to a loopback address, none to a canary or unix socket", () => {
    const attempts = spy.attempts();
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.filter((ip) => !isLoopbackIp(ip))).toEqual([]);
    expect(attempts.filter((ip) => !["127.0.0.1", "::ffff:127.0.0.1", "::ffff:7f00:1"].includes(ip))).toEqual([]);
    expect(spy.records.filter((r) => r.path !== undefined)).toEqual([]);
  });
});
