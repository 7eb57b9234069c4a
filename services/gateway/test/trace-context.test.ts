import type { AddressInfo } from "node:net";
import { MemoryCache } from "@c402/cache";
import { createCapturingLogger } from "@c402/logging";
import { currentContext, isTraceparent, traceIdOf, type RequestContext } from "@c402/rpc";
import { createGatewayApp } from "../src/index";
import { BASE_URL, fakeClients, SITE_URL } from "./support/fake-gateway";

/**
 * Every request is one trace: the gateway continues a valid incoming W3C
 * traceparent or starts one, the services' calls carry it (the rpc client puts
 * the context into call metadata), and the request's log line names it.
 */
describe("trace context at the gateway", () => {
  const seen: (RequestContext | undefined)[] = [];
  const { logger, lines } = createCapturingLogger({ service: "gateway-test" });
  let url: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const app = createGatewayApp({
      clients: fakeClients({ webhooks: { verificationKeys: async () => (seen.push(currentContext()), { keys: [] }) as never } }),
      cache: new MemoryCache(),
      logger,
      settings: { serviceName: "c402", version: "0.0.0", runMode: "embedded", authRateLimitPerMinute: 30, baseUrl: BASE_URL, siteUrl: SITE_URL },
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/webhooks/verification-key`;
    close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  });
  afterAll(() => close());

  const requestLine = (requestId: string) => lines.map((l) => JSON.parse(l)).find((l) => l.msg === "request" && l.request_id === requestId);

  it("starts a trace for a request that comes without one, and the services' calls and the log line carry it", async () => {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const context = seen.at(-1)!;
    expect(isTraceparent(context.traceparent)).toBe(true);
    expect(context.requestId).toBe(res.headers.get("x-request-id"));
    await new Promise((r) => setTimeout(r, 20));
    expect(requestLine(context.requestId)).toMatchObject({ trace_id: traceIdOf(context.traceparent!) });
  });

  it("continues a valid incoming trace, and starts afresh for a malformed or all-zero one", async () => {
    const incoming = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    await fetch(url, { headers: { traceparent: incoming } });
    expect(seen.at(-1)!.traceparent).toBe(incoming);
    for (const bad of ["00-xyz-b7ad6b7169203331-01", `00-${"0".repeat(32)}-b7ad6b7169203331-01`]) {
      await fetch(url, { headers: { traceparent: bad } });
      const started = seen.at(-1)!.traceparent!;
      expect(isTraceparent(started)).toBe(true);
      expect(started).not.toBe(bad);
    }
  });
});
