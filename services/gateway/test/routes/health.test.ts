import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { MemoryCache } from "@c402/cache";
import { healthV1 } from "@c402/contracts";
import { createCapturingLogger } from "@c402/logging";
import type { ServiceClient } from "@c402/rpc";
import { createGatewayApp } from "../../src/index";
import { BASE_URL, fakeClients, SITE_URL } from "../support/fake-gateway";

/**
 * GET /health: liveness from the process alone; ?deep=true asks every
 * service's health check. A component that is down makes it 503 with the
 * same body (status degraded, which one), and why it is down goes to the log
 * with the request id, never into the public answer.
 */

const SECRET_LOOKING = "connect ECONNREFUSED 10.0.4.17:5432 user=c402_payments password=hunter2";

type HealthClient = ServiceClient<typeof healthV1.HealthService>;
const answering = (components: { name: string; status: string; detail?: string }[]): HealthClient =>
  ({
    check: async () => create(healthV1.CheckResponseSchema, { service: "x", components: components.map((c) => ({ ...c, latencyMs: 2 })) }),
  }) as unknown as HealthClient;
const failing = (message: string): HealthClient =>
  ({
    check: async () => {
      throw new Error(message);
    },
  }) as unknown as HealthClient;

async function serve(health: Record<string, HealthClient>) {
  const { logger, lines } = createCapturingLogger({ service: "gateway-test", level: "warn" });
  const app = createGatewayApp({
    clients: { ...fakeClients({}), health },
    cache: new MemoryCache(),
    logger,
    settings: { serviceName: "c402", version: "0.0.0", runMode: "embedded", authRateLimitPerMinute: 30, baseUrl: BASE_URL, siteUrl: SITE_URL },
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lines,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("GET /health", () => {
  it("answers 200 ok when every component is up, without asking them unless deep", async () => {
    const s = await serve({ payments: answering([{ name: "database", status: "ok" }]) });
    try {
      const shallow = await fetch(`${s.url}/health`);
      expect([shallow.status, ((await shallow.json()) as { components?: unknown }).components]).toEqual([200, undefined]);
      const deep = await fetch(`${s.url}/health?deep=true`);
      expect(deep.status).toBe(200);
      expect(await deep.json()).toMatchObject({
        status: "ok",
        components: { cache: { status: "ok" }, payments: { status: "ok", components: { database: { status: "ok" } } } },
      });
    } finally {
      await s.close();
    }
  });

  it("answers 503 degraded naming what is down, and logs why with the request id, never answering it", async () => {
    const s = await serve({
      payments: answering([
        { name: "database", status: "down", detail: SECRET_LOOKING },
        { name: "bus", status: "ok" },
      ]),
      webhooks: failing(SECRET_LOOKING),
      catalog: answering([{ name: "database", status: "ok" }]),
    });
    try {
      const res = await fetch(`${s.url}/health?deep=true`, { headers: { "x-request-id": "req_health_check_0001" } });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      const text = await res.text();
      expect(text).not.toContain("hunter2");
      expect(text).not.toContain("10.0.4.17");
      expect(JSON.parse(text)).toMatchObject({
        status: "degraded",
        components: {
          payments: { status: "down", components: { database: { status: "down" }, bus: { status: "ok" } } },
          webhooks: { status: "down" },
          catalog: { status: "ok" },
        },
      });
      expect(text).not.toContain("detail");
      // The shallow liveness probe does not depend on them.
      expect((await fetch(`${s.url}/health`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 50));
      const logged = s.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === "health: a component is down");
      expect(logged.map((l) => [l.component, l.request_id])).toEqual(
        expect.arrayContaining([
          ["payments.database", "req_health_check_0001"],
          ["webhooks", "req_health_check_0001"],
        ]),
      );
    } finally {
      await s.close();
    }
  });
});
