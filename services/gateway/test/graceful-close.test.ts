import { Agent, request } from "node:http";
import { MemoryCache } from "@c402/cache";
import { createLogger } from "@c402/logging";
import { startGateway, type StartedGateway } from "../src/index";
import { BASE_URL, fakeClients, SITE_URL } from "./support/fake-gateway";

/**
 * The gateway's stop (G36): it refuses new connections at once, lets the
 * requests in flight finish and tells their clients to close, cuts idle
 * keep-alive connections (which would otherwise hold the stop open for the 65 s
 * keep-alive timeout, past Kubernetes' grace), and cuts whatever is left when
 * its grace runs out.
 */
describe("gateway close()", () => {
  let release: () => void;
  let gateway: StartedGateway;
  const agent = new Agent({ keepAlive: true });

  beforeEach(async () => {
    const held = new Promise<void>((resolve) => (release = resolve));
    gateway = await startGateway({
      host: "127.0.0.1",
      port: 0,
      baseUrl: BASE_URL,
      siteUrl: SITE_URL,
      settings: { serviceName: "c402", version: "0.0.0", runMode: "embedded", authRateLimitPerMinute: 30 },
      clients: fakeClients({ webhooks: { verificationKeys: async () => (await held, { keys: [] }) as never } }),
      cache: new MemoryCache(),
      logger: createLogger({ service: "gateway-test", level: "silent" }),
    });
  });
  afterEach(() => release());
  afterAll(() => agent.destroy());

  /** GET on a kept-alive connection (as undici and browsers do); the answer's status and Connection header, or the socket error. */
  const get = (path: string, via: Agent | false = agent) =>
    new Promise<string>((resolve) => {
      const req = request(`http://127.0.0.1:${gateway.port}${path}`, { agent: via }, (res) => {
        res.resume();
        res.on("end", () => resolve(`${res.statusCode} connection: ${res.headers.connection}`));
      });
      req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      req.end();
    });

  it("finishes the request in flight with Connection: close, refuses new connections, and returns without waiting for keep-alive", async () => {
    expect(await get("/health")).toBe("200 connection: keep-alive");
    const inFlight = get("/v1/webhooks/verification-key");
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    const closed = gateway.close(10_000);
    expect(await get("/health", false)).toBe("ECONNREFUSED");
    release();
    expect(await inFlight).toBe("200 connection: close");
    await closed;
    // Not the 65 s keep-alive timeout of the connection the answer went out on.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("cuts a request that outlives the grace, and returns at the grace", async () => {
    const inFlight = get("/v1/webhooks/verification-key");
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await gateway.close(300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await inFlight).toBe("ECONNRESET");
  });
});
