import { loadConfig } from "@c402/config";
import { httpRequestDuration, metricsSpec, oncePerScrape, outboxUnpublished, startMetricsServer, webhookDeliveries } from "../src";

describe("metrics endpoint", () => {
  let server: Awaited<ReturnType<typeof startMetricsServer>>;
  let url: string;
  beforeAll(async () => {
    server = await startMetricsServer({ host: "127.0.0.1", port: 0 });
    url = `http://127.0.0.1:${server.port}`;
  });
  afterAll(() => server.close());

  it("serves the Prometheus text format on GET /metrics, with process metrics and what was recorded", async () => {
    httpRequestDuration.observe({ method: "GET", route: "/c/:id", status: "402" }, 0.004);
    webhookDeliveries.inc({ outcome: "delivered" });
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('c402_http_request_duration_seconds_count{method="GET",route="/c/:id",status="402"} 1');
    expect(text).toContain('c402_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/c/:id",status="402"} 1');
    expect(text).toContain('c402_webhook_deliveries_total{outcome="delivered"} 1');
    expect(text).toMatch(/^c402_process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^c402_nodejs_eventloop_lag_seconds \d/m);
  });

  it("reads scraped gauges from every source at scrape time; a failing source is left out, the others answer", async () => {
    let waiting = 3;
    const removeA = outboxUnpublished.source(async () => [{ labels: { service: "catalog" }, value: waiting }]);
    const removeB = outboxUnpublished.source(async () => {
      throw new Error("database down");
    });
    const removeC = outboxUnpublished.source(async () => [{ labels: { service: "payments" }, value: 0 }]);
    let text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toContain('c402_outbox_unpublished_events{service="catalog"} 3');
    expect(text).toContain('c402_outbox_unpublished_events{service="payments"} 0');
    waiting = 1;
    removeC();
    text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toContain('c402_outbox_unpublished_events{service="catalog"} 1');
    // A source that stopped (a service stopped) no longer reports.
    expect(text).not.toContain('service="payments"');
    removeA();
    removeB();
  });

  it("answers nothing else: 404 for other paths, 405 with Allow for other methods", async () => {
    expect((await fetch(`${url}/`)).status).toBe(404);
    expect((await fetch(`${url}/health`)).status).toBe(404);
    const post = await fetch(`${url}/metrics`, { method: "POST", body: "x" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const head = await fetch(`${url}/metrics`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("shares one read among the gauges of one scrape, and reads afresh for the next", async () => {
    let reads = 0;
    const read = oncePerScrape(async () => ++reads, 50);
    expect(await Promise.all([read(), read()])).toEqual([1, 1]);
    await new Promise((r) => setTimeout(r, 80));
    expect(await read()).toBe(2);
  });

  it("on a taken port: refuses to start, or takes a free port when told it may", async () => {
    await expect(startMetricsServer({ host: "127.0.0.1", port: server.port })).rejects.toMatchObject({ code: "EADDRINUSE" });
    const second = await startMetricsServer({ host: "127.0.0.1", port: server.port, orFreePort: true });
    try {
      expect(second.port).not.toBe(server.port);
      expect((await fetch(`http://127.0.0.1:${second.port}/metrics`)).status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it("listens on loopback at 9464 unless told otherwise, and refuses a port out of range", () => {
    expect(loadConfig(metricsSpec, {})).toEqual({ metricsHost: "127.0.0.1", metricsPort: 9464 });
    expect(() => loadConfig(metricsSpec, { METRICS_PORT: "70000" })).toThrow(/METRICS_PORT must be at most 65535/);
  });
});
