import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { webhooksV1 } from "@c402/contracts";
import { createCapturingLogger } from "@c402/logging";
import { createClient, grpcHealth } from "@c402/rpc";
import { SERVICES } from "@c402/topology";
import { decodeHeader, encodeHeader, signExactEvmPayment, type PaymentRequired } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startEmbeddedSystem, type EmbeddedSystem } from "../src/system";
import { json, signIn } from "./seller";

describe("the embedded system", () => {
  const { logger, lines: logLines } = createCapturingLogger({ service: "embedded-test", level: "debug" });
  let dataDir: string;
  let system: EmbeddedSystem;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "c402-embedded-"));
    system = await startEmbeddedSystem({ port: 0, dataDir, logger, authRateLimitPerMinute: 1000 });
  });
  afterAll(async () => {
    await system?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("records the payment.settled event of a rehearsal in the webhooks service (outbox -> bus -> consumer)", async () => {
    const base = system.gateway.baseUrl;
    const seller = await signIn(base);
    const auth = { authorization: `Bearer ${seller.api_key.secret}` };
    const checkout = await json(`${base}/v1/checkouts`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ title: "t", price_usd: "1", payload: "goods" }),
    });
    const quote = await fetch(`${base}/c/${checkout.body.id}/test`);
    const required = decodeHeader(quote.headers.get("payment-required") as string) as unknown as PaymentRequired;
    const payment = await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), required.accepts[0]!);
    const paid = await json(`${base}/c/${checkout.body.id}/test`, { headers: { "payment-signature": encodeHeader(payment) } });
    expect(paid.status).toBe(200);
    expect(paid.body.fulfillment.payload).toBe("goods");

    // Its services refuse a caller without the process's token (an internal error to that caller, never a 401).
    const stranger = createClient(webhooksV1.WebhooksService, system.grpcAddresses.webhooks as string);
    await expect(stranger.listRecordedEvents({ accountId: seller.account.id })).rejects.toMatchObject({ slug: "internal" });
    const forged = createClient(webhooksV1.WebhooksService, system.grpcAddresses.webhooks as string, { token: "f".repeat(64) });
    await expect(forged.listRecordedEvents({ accountId: seller.account.id })).rejects.toMatchObject({ slug: "internal" });
    stranger.close();
    forged.close();
    const webhooks = createClient(webhooksV1.WebhooksService, system.grpcAddresses.webhooks as string, { token: system.rpcToken });
    let events: webhooksV1.RecordedEvent[] = [];
    for (let i = 0; i < 100 && events.length === 0; i++) {
      events = (await webhooks.listRecordedEvents({ accountId: seller.account.id })).events;
      if (events.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    webhooks.close();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "payment.settled", aggregateId: paid.body.receipt.id, testMode: true, accountId: seller.account.id });

    // Secrets never reach the logs: not the API key, not the payment header.
    const all = logLines.join("");
    expect(all).toContain('"msg":"request"');
    expect(all).not.toContain(seller.api_key.secret);
    expect(all).not.toContain(encodeHeader(payment).slice(0, 40));
  });

  it("reports every service SERVING on grpc.health.v1 once started", async () => {
    expect(Object.keys(system.grpcAddresses).sort()).toEqual(SERVICES.map((s) => s.name).sort());
    for (const address of Object.values(system.grpcAddresses)) expect(await grpcHealth(address)).toBe("SERVING");
  });

  it("keeps its data across a restart on the same DATA_DIR", async () => {
    const base = system.gateway.baseUrl;
    const seller = await signIn(base);
    const auth = { authorization: `Bearer ${seller.api_key.secret}` };
    const created = await json(`${base}/v1/checkouts`, { method: "POST", headers: auth, body: JSON.stringify({ title: "persisted", price_usd: "2" }) });
    await system.stop();
    system = await startEmbeddedSystem({ port: 0, dataDir, logger, authRateLimitPerMinute: 1000 });
    const again = await json(`${system.gateway.baseUrl}/v1/checkouts/${created.body.id}`, { headers: auth });
    expect(again.status).toBe(200);
    expect(again.body.title).toBe("persisted");
  });

  it("runs side by side with a second instance (different port and data dir)", async () => {
    const other = await startEmbeddedSystem({ port: 0, dataDir: ":memory:", logger });
    try {
      expect(other.gateway.port).not.toBe(system.gateway.port);
      // Embedded mode runs on a developer's machine: sellers' origins may be on loopback, and the start line says so.
      expect([system.origins, other.origins]).toEqual(["loopback origins allowed", "loopback origins allowed"]);
      expect(Object.keys(other.grpcAddresses)).toEqual(SERVICES.map((s) => s.name));
      expect((await json(`${other.gateway.baseUrl}/health?deep=true`)).body.status).toBe("ok");
      expect((await json(`${system.gateway.baseUrl}/health?deep=true`)).body.status).toBe("ok");
    } finally {
      await other.stop();
    }
  });

  it("stops the devchain it started when a later step of the start fails (no orphan chain process)", async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const gatewayPort = (taken.address() as AddressInfo).port;
    const { logger: startLog, lines } = createCapturingLogger({ service: "failed-start", level: "info" });
    try {
      // devchainPort 0: the chain binds a port the OS gives it (a port picked here and bound later could be another suite's chain by then).
      await expect(startEmbeddedSystem({ port: gatewayPort, devchainPort: 0, dataDir: ":memory:", logger: startLog })).rejects.toThrow(/EADDRINUSE/);
      const served = lines.map((l) => JSON.parse(l) as { msg?: string; url?: string }).find((l) => l.msg === "devchain serving");
      const chainPort = Number(new URL(served?.url ?? "http://127.0.0.1:0").port);
      expect(chainPort).toBeGreaterThan(0);
      // Its process is gone: nothing answers on its port any more.
      const refused = await new Promise<string>((resolve) => {
        const socket = connect(chainPort, "127.0.0.1");
        socket.once("connect", () => {
          socket.destroy();
          resolve("connected");
        });
        socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? "error"));
      });
      expect(refused).toBe("ECONNREFUSED");
    } finally {
      await new Promise<void>((r) => taken.close(() => r()));
    }
  });

  it("rate-limits wallet sign-in per client with X-RateLimit headers and a 429 problem", async () => {
    const limited = await startEmbeddedSystem({ port: 0, dataDir: ":memory:", logger, authRateLimitPerMinute: 3 });
    try {
      const body = JSON.stringify({ address: privateKeyToAccount(generatePrivateKey()).address, network: "eip155:8453" });
      const statuses = [];
      let last;
      for (let i = 0; i < 4; i++) {
        last = await json(`${limited.gateway.baseUrl}/auth/wallet/challenge`, { method: "POST", body });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(last!.headers.get("x-ratelimit-limit")).toBe("3");
      expect(last!.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(last!.body.type).toMatch(/\/problems\/rate-limited$/);
    } finally {
      await limited.stop();
    }
  });
});
