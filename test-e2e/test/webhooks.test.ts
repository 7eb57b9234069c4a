import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { startFakeMcpServer, type FakeMcpServer } from "@c402/testkit/fake-mcp-server";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { eventually } from "@c402/testkit";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { devchainWallets } from "../src/devchain";
import { baseUrl, call, newCheckout, newSeller, payRehearsal } from "../src/http";

/**
 * Webhooks over the running service: receivers registered, listed without
 * their secret, re-keyed and deleted; the verification key; and the README's
 * receiver (examples/webhook-receiver, which accepts a delivery only when both
 * signatures verify) getting checkout.paid for every sale, live and
 * rehearsal, in every fulfillment mode, with the amounts the receipt and the
 * chain show, and checkout.reported; the README's ten-line receiver does the
 * same checks. A receiver that was down gets the sale
 * once it is back.
 */

const RECEIVER = join(__dirname, "..", "..", "examples", "webhook-receiver", "receiver.js");
const TEN_LINES = join(__dirname, "..", "..", "examples", "webhook-receiver", "ten-lines.mjs");

interface Received {
  id: string;
  event: string;
  data: Record<string, any>;
}

/** A free loopback port (the receiver's url is registered before it listens). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs the README receiver with a secret; answers the events it accepted, as it prints them. */
async function runReceiver(port: number, secret: string): Promise<{ child: ChildProcess; events: Received[]; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [RECEIVER], {
    env: { ...process.env, SERVICE_URL: baseUrl(), WEBHOOK_SECRET: secret, PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const events: Received[] = [];
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`receiver exited with ${code}`)));
    lines.on("line", (line) => {
      if (line.startsWith("listening on ")) return resolve();
      events.push(JSON.parse(line) as Received);
    });
  });
  return {
    child,
    events,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

describe("webhooks", () => {
  let seller: Awaited<ReturnType<typeof newSeller>>;
  let origin: FakeOrigin;
  let mcpServer: FakeMcpServer;
  let port: number;
  let webhook: Record<string, any>;
  let receiver: Awaited<ReturnType<typeof runReceiver>>;

  beforeAll(async () => {
    seller = await newSeller();
    origin = await startFakeOrigin();
    mcpServer = await startFakeMcpServer({ tools: [{ name: "forecast", inputSchema: { type: "object" }, answer: () => "sunny" }] });
    port = await freePort();
  });
  afterAll(async () => {
    await receiver?.stop();
    await origin.close();
    await mcpServer.close();
  });

  it("registers a receiver (201, the secret once), lists it without the secret, re-keys it by its url, and refuses bad input", async () => {
    const url = `http://127.0.0.1:${port}/hooks`;
    const created = await call("POST", "/v1/webhooks", { key: seller.key, body: { url, events: ["checkout.paid", "checkout.reported"] } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: "webhook",
      url,
      events: ["checkout.paid", "checkout.reported"],
      active: true,
      rekeyed: false,
      failure_count: 0,
    });
    expect(created.body.id).toMatch(/^wh_[0-9A-Za-z]{24}$/);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.body.note).toMatch(/shown once/);
    expect(created.headers.get("cache-control")).toBe("no-store");

    const again = await call("POST", "/v1/webhooks", { key: seller.key, body: { url, events: ["checkout.paid", "checkout.reported"] } });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ id: created.body.id, rekeyed: true, active: true, failure_count: 0 });
    expect(again.body.secret).not.toBe(created.body.secret);
    expect(again.body.rekeyed_at).not.toBeNull();
    webhook = again.body;

    const defaulted = await call("POST", "/v1/webhooks", { key: seller.key, body: { url: `${url}/default`, events: null } });
    expect(defaulted.body.events).toEqual(["checkout.paid"]);

    const listed = await call("GET", "/v1/webhooks", { key: seller.key });
    expect(listed.status).toBe(200);
    expect(listed.body.webhooks.map((w: { id: string }) => w.id)).toEqual([defaulted.body.id, webhook.id]);
    expect(listed.text).not.toContain("whsec_");
    expect(listed.body.webhooks[1]).not.toHaveProperty("secret");
    expect(listed.body).toMatchObject({ has_more: false, next_cursor: null });

    for (const [body, field] of [
      [{ url: "https://example.com/hook", events: ["checkout.refunded"] }, "events"],
      [{ url: "http://example.com/hook" }, "url"],
      [{ url: "https://10.1.2.3/hook" }, "url"],
      [{ url: "https://example.com/hook", events: [] }, "events"],
      [{ url: "https://example.com/hook", secret: "mine" }, "secret"],
      [{}, "url"],
    ] as const) {
      const r = await call("POST", "/v1/webhooks", { key: seller.key, body });
      expect({ body, status: r.status, type: r.headers.get("content-type") }).toMatchObject({
        status: 422,
        type: expect.stringContaining("application/problem+json"),
      });
      expect(JSON.stringify(r.body.errors)).toContain(field);
    }
    const deleted = await call("DELETE", `/v1/webhooks/${defaulted.body.id}`, { key: seller.key });
    expect(deleted.body).toMatchObject({ id: defaulted.body.id, deleted: true, pending_removed: 0 });
    // Webhooks' account events reach identity through its outbox: a moment after the change (docs/account-events.md).
    const events = await eventually(
      () => call("GET", "/v1/account/events?action=webhook.", { key: seller.key }),
      (r) => r.body.events.length >= 4,
      10_000,
    );
    expect(events.body.events.map((e: { action: string }) => e.action).sort()).toEqual([
      "webhook.created",
      "webhook.created",
      "webhook.deleted",
      "webhook.rekeyed",
    ]);
    expect(events.text).not.toContain("whsec_");
  });

  it("publishes the verification key without a credential", async () => {
    const r = await call("GET", "/v1/webhooks/verification-key");
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toMatch(/^public, max-age=[0-9]+$/);
    expect(Buffer.from(r.body.public_key, "base64")).toHaveLength(32);
    expect(r.body.keys[0]).toMatchObject({ id: r.body.key_id, algorithm: "Ed25519", public_key: r.body.public_key });
    expect(r.body.keys[0].public_key_pem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
  });

  it("the README receiver, checking both signatures, gets checkout.paid for every sale (live and rehearsal, inline, relay, mcp and webhook) and checkout.reported", async () => {
    receiver = await runReceiver(port, webhook.secret);
    const inline = await newCheckout(seller.key, { reusable: true });
    const relay = await newCheckout(seller.key, { title: "Relay", origin_url: `${origin.url}/echo`, payload: undefined, reusable: true });
    const made = await newCheckout(seller.key, { title: "Made to order", fulfillment: "webhook", payload: undefined, reusable: true });
    const tool = await newCheckout(seller.key, { title: "Tool", origin_url: mcpServer.url, mcp_tool: "forecast", payload: undefined, reusable: true });
    const live = await newCheckout(seller.key, { title: "Live tides", test_mode: false, reusable: true });
    const rehearsals = [await payRehearsal(inline.id), await payRehearsal(relay.id), await payRehearsal(made.id), await payRehearsal(tool.id)].map(
      (r) => r.body.receipt.id as string,
    );

    const chain = await devchainWallets(17);
    const buyer = await chain.fundedBuyer(1_000_000n);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: buyer });
    const paid = await wrapFetchWithPayment(fetch, client)(`${baseUrl()}/c/${live.id}`, { headers: { accept: "application/json" } });
    expect(paid.status).toBe(200);
    const liveReceipt = ((await paid.json()) as { receipt: { id: string } }).receipt.id;
    const spent = 1_000_000n - (await chain.balance(buyer.address));
    const report = await call("POST", `/v1/checkouts/${inline.id}/reports`, { body: { category: "stale_data", detail: "old" } });
    expect(report.status).toBe(201);

    const events = await eventually(
      () => receiver.events,
      (e) => e.length >= 6,
      60_000,
    );
    const sales = events.filter((e) => e.event === "checkout.paid");
    expect(sales.map((e) => e.data.payment_id).sort()).toEqual([...rehearsals, liveReceipt].sort());
    for (const sale of sales) {
      const receipt = (await call("GET", `/v1/receipts/${sale.data.payment_id}`, { key: seller.key })).body;
      expect(sale.data).toMatchObject({
        checkout_id: receipt.checkout_id,
        total: receipt.total,
        provider_amount: receipt.provider_amount,
        fee_amount: receipt.fee_amount,
        platform_amount: null,
        payer: receipt.payer,
        pay_to: receipt.pay_to,
        tx_hash: receipt.tx_hash,
        network: receipt.network,
        test_mode: receipt.test_mode,
        receipt_url: `${baseUrl()}/r/${sale.data.payment_id}`,
        handoff_id: null,
      });
      expect(sale.data.provider_amount + sale.data.fee_amount).toBe(sale.data.total);
      expect(sale.id).toMatch(/^msg_/);
    }
    const liveSale = sales.find((e) => e.data.payment_id === liveReceipt)!;
    expect(liveSale.data).toMatchObject({ test_mode: false, payer: buyer.address, title: "Live tides", asset: "USDC" });
    expect(BigInt(liveSale.data.total)).toBe(spent);
    // The payload alone is not authority (spec, Signatures 3): the receipt it names, served here without a credential, and the chain are.
    const authority = await call("GET", new URL(liveSale.data.receipt_url).pathname);
    expect(authority.status).toBe(200);
    expect(authority.body).toMatchObject({ id: liveReceipt, tx_hash: liveSale.data.tx_hash, payer: buyer.address, test_mode: false });
    const mined = await chain.pub.getTransactionReceipt({ hash: liveSale.data.tx_hash });
    expect(mined.status).toBe("success");
    // A payload naming a payment that never happened names no receipt.
    expect((await call("GET", `/r/pay_${"F".repeat(24)}`)).status).toBe(404);
    const reported = events.find((e) => e.event === "checkout.reported")!;
    expect(reported.data).toMatchObject({ report_id: report.body.id, checkout_id: inline.id, category: "stale_data", kind: "anonymous" });

    // The seller sees each delivery and its attempt (recorded just after the receiver answered).
    await eventually(
      () => call("GET", `/v1/webhooks/${webhook.id}/deliveries?status=delivered`, { key: seller.key }),
      (r) => r.body.deliveries.length === 6,
    );
    const one = await call("GET", `/v1/webhooks/${webhook.id}/deliveries/${liveSale.id}`, { key: seller.key });
    expect(one.body).toMatchObject({ id: liveSale.id, status: "delivered", event: "checkout.paid", object_id: liveReceipt, test_mode: false });
    expect(one.body.attempts[0]).toMatchObject({ number: 1, status_code: 200, outcome: "delivered", error: null });
    expect(one.body.payload.data.payment_id).toBe(liveReceipt);
    const [listed] = (await call("GET", "/v1/webhooks", { key: seller.key })).body.webhooks;
    expect(listed).toMatchObject({ delivered: 6, failure_count: 0, pending_deliveries: 0 });
  }, 120_000);

  it("the README's ten-line receiver accepts a genuine delivery and refuses a forged one", async () => {
    const tenPort = await freePort();
    const registered = await call("POST", "/v1/webhooks", { key: seller.key, body: { url: `http://127.0.0.1:${tenPort}/` } });
    const child = spawn(process.execPath, [TEN_LINES], {
      env: { ...process.env, SERVICE_URL: baseUrl(), WEBHOOK_SECRET: registered.body.secret, PORT: String(tenPort) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const lines: string[] = [];
      createInterface({ input: child.stdout! }).on("line", (l) => lines.push(l));
      await eventually(
        () => lines,
        (l) => l.includes("listening"),
        20_000,
      );
      const sale = await payRehearsal((await newCheckout(seller.key, { reusable: true })).id);
      const [accepted] = await eventually(
        () => lines.filter((l) => l.endsWith(" checkout.paid")),
        (l) => l.length === 1,
        30_000,
      );
      const deliveries = (await call("GET", `/v1/webhooks/${registered.body.id}/deliveries`, { key: seller.key })).body.deliveries;
      expect(accepted).toBe(`${deliveries[0].id} checkout.paid`);
      expect(deliveries[0].object_id).toBe(sale.body.receipt.id);
      const t = Math.floor(Date.now() / 1000);
      const forged = await fetch(`http://127.0.0.1:${tenPort}/`, {
        method: "POST",
        headers: { "x-service-signature": `t=${t},v1=${"0".repeat(64)}`, "x-service-ed25519": `t=${t},v1=AAAA`, "webhook-id": "msg_forged" },
        body: JSON.stringify({ event: "checkout.paid" }),
      });
      expect(forged.status).toBe(401);
      await call("DELETE", `/v1/webhooks/${registered.body.id}`, { key: seller.key });
    } finally {
      child.kill("SIGTERM");
    }
  }, 60_000);

  it("delivers a sale made while the receiver was down once it is back (the same webhook-id)", async () => {
    await receiver.stop();
    const inline = await newCheckout(seller.key, { reusable: true });
    const sale = (await payRehearsal(inline.id)).body.receipt.id as string;
    const failed = await eventually(
      () => call("GET", `/v1/webhooks/${webhook.id}/deliveries?status=pending`, { key: seller.key }),
      (r) => r.body.deliveries.some((d: { attempts: number; last_error: string | null }) => d.attempts >= 1 && d.last_error !== null),
      20_000,
    );
    const pending = failed.body.deliveries[0];
    expect(pending.last_error).toMatch(/^unreachable/);
    receiver = await runReceiver(port, webhook.secret);
    // The first retry is due 30 s after the failure, jittered by at most 20%.
    const [got] = await eventually(
      () => receiver.events.filter((e) => e.data.payment_id === sale),
      (e) => e.length === 1,
      60_000,
    );
    expect(got!.id).toBe(pending.id);
    const after = await call("GET", `/v1/webhooks/${webhook.id}/deliveries/${pending.id}`, { key: seller.key });
    expect(after.body.attempts.map((a: { outcome: string }) => a.outcome)).toEqual(["retry", "delivered"]);
  }, 90_000);

  it("removes a deleted receiver: nothing more is sent to it", async () => {
    const deleted = await call("DELETE", `/v1/webhooks/${webhook.id}`, { key: seller.key });
    expect(deleted.status).toBe(200);
    const before = receiver.events.length;
    await payRehearsal((await newCheckout(seller.key, { reusable: true })).id);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(receiver.events).toHaveLength(before);
    expect((await call("GET", `/v1/webhooks/${webhook.id}/deliveries`, { key: seller.key })).status).toBe(404);
  });
});
