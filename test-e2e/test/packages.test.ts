import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startFakeMcpServer, type FakeMcpServer } from "@c402/testkit/fake-mcp-server";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { encodeHeader, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { devchainWallets } from "../src/devchain";
import { baseUrl, call, decoded, newCheckout, newSeller } from "../src/http";

/**
 * Packages of calls over the running services: one payment buys N calls of a
 * relay (or mcp) checkout; the purchase answers the first call's goods and a
 * package key shown once; the key spends the rest (GET with Authorization:
 * Bearer), a seller-side failure gives the call back, an exhausted package
 * answers 402, 50 concurrent calls on 10 left give exactly 10, the key's
 * calls per minute are limited, and the usage record shows it all.
 */

const buyer = privateKeyToAccount(generatePrivateKey());

async function signed(path: string) {
  const r = await call("GET", path.split("?")[0] as string);
  expect(r.status).toBe(402);
  const required = decoded(r.headers.get("payment-required"));
  return encodeHeader(await signExactEvmPayment(buyer, required.accepts[0] as PaymentRequirements, { resourceUrl: required.resource.url }));
}
const pay = (path: string, payment: string) => call("GET", path, { headers: { "PAYMENT-SIGNATURE": payment } });
const spend = (path: string, key: string) => call("GET", path, { headers: { Authorization: `Bearer ${key}` } });

/** An origin whose answer the test switches: the seller's API going down and back up. */
async function switchableOrigin(): Promise<{ url: string; status: { code: number }; calls: () => number; close: () => Promise<void> }> {
  const status = { code: 200 };
  let calls = 0;
  const server: Server = createServer((req, res) => {
    calls++;
    res.writeHead(status.code, { "content-type": "application/json" }).end(JSON.stringify({ status: status.code, url: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`,
    status,
    calls: () => calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("packages of calls", () => {
  let origin: FakeOrigin;
  let seller: Awaited<ReturnType<typeof newSeller>>;
  const packageOf = (calls: number, extra: Record<string, unknown> = {}) =>
    newCheckout(seller.key, {
      title: `Package of ${calls}`,
      price_usd: "2.00",
      payload: undefined,
      origin_url: `${origin.url}/echo`,
      max_deliveries: calls,
      reusable: true,
      test_delivery_daily_cap: 1000,
      ...extra,
    });
  /** Buys a package on the rehearsal face: the purchase answer. */
  const buy = async (checkoutId: string, query = "") => {
    const path = `/c/${checkoutId}/test${query}`;
    const payment = await signed(path);
    const r = await pay(path, payment);
    expect(r.status).toBe(200);
    return { ...r, payment, path };
  };

  beforeAll(async () => {
    origin = await startFakeOrigin();
    seller = await newSeller();
  });
  afterAll(() => origin.close());

  it("creates a package checkout (max_deliveries, package_ttl_days default 30), read and listed as sent; its 402 names the package and the offer calls_included", async () => {
    const c = await packageOf(5);
    expect(c).toMatchObject({ fulfillment: "relay", max_deliveries: 5, package_ttl_days: 30 });
    const list = await call("GET", "/v1/checkouts", { key: seller.key });
    expect(list.body.checkouts.find((x: { id: string }) => x.id === c.id)).toMatchObject({ max_deliveries: 5, package_ttl_days: 30 });
    const quote = await call("GET", `/c/${c.id}`);
    expect(quote.status).toBe(402);
    expect(quote.body.offer.calls_included).toBe(5);
    expect(quote.body.endpoint.package).toMatchObject({ calls: 5, expires_in_days: 30, usage_url: `${baseUrl()}/c/${c.id}/usage` });
    const single = await newCheckout(seller.key, { title: "One call", price_usd: "0.10", payload: undefined, origin_url: `${origin.url}/echo` });
    expect(single).toMatchObject({ max_deliveries: null, package_ttl_days: null });
    expect((await call("GET", `/c/${single.id}`)).body.endpoint.package).toBeUndefined();
  });

  it("refuses a package under $1.00, of inline goods, or a lifetime without a package (422 naming the field)", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ origin_url: `${origin.url}/echo`, price_usd: "0.50", max_deliveries: 10 }, "price_usd"],
      [{ payload: { a: 1 }, price_usd: "5.00", max_deliveries: 10 }, "max_deliveries"],
      [{ origin_url: `${origin.url}/echo`, price_usd: "5.00", package_ttl_days: 7 }, "package_ttl_days"],
      [{ origin_url: `${origin.url}/echo`, price_usd: "5.00", max_deliveries: 10, package_ttl_days: 0 }, "package_ttl_days"],
    ];
    for (const [body, field] of cases) {
      const r = await call("POST", "/v1/checkouts", { key: seller.key, body: { title: "Bad package", ...body } });
      expect([JSON.stringify(body), r.status, r.body.errors?.map((e: { field: string }) => e.field)]).toEqual([JSON.stringify(body), 422, [field]]);
    }
  });

  it("the purchase answers the first call's goods, the key once and deliveries_remaining; the key spends the rest with the buyer's parameters until 402", async () => {
    const c = await packageOf(3);
    const bought = await buy(c.id, "?city=Paris");
    expect(bought.body).toMatchObject({
      fulfillment: { mode: "relay", origin_status: 200, payload: { query: { city: "Paris" } } },
      deliveries_remaining: 2,
      package: { status: "live", calls_included: 3, calls_used: 1, calls_remaining: 2, usage_url: `${baseUrl()}/c/${c.id}/usage` },
      receipt: { test_mode: true },
    });
    const key = bought.body.package_key as string;
    expect(key).toMatch(/^pk_test_[0-9A-Za-z]{32}$/);
    expect(Date.parse(bought.body.package.expires_at) - Date.now()).toBeGreaterThan(29.9 * 86_400_000);

    // Presenting the same payment again redelivers the goods, never the key.
    const again = await pay(bought.path, bought.payment);
    expect(again.body).toMatchObject({ redelivered: true, package_key: null, deliveries_remaining: 2 });
    expect(again.text).not.toContain(key);

    const first = await spend(`/c/${c.id}?city=Oslo`, key);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      fulfillment: { mode: "relay", origin_status: 200, payload: { query: { city: "Oslo" } } },
      calls_remaining: 1,
      call: { seq: 2, counted: true },
      package: { calls_used: 2 },
      receipt_url: `${baseUrl()}/r/${bought.body.receipt.id}`,
      test_mode: true,
    });
    expect(first.headers.get("x-ratelimit-limit")).toBe("60");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("59");
    // Either face: the key is scoped to its checkout.
    expect((await spend(`/c/${c.id}/test`, key)).body.calls_remaining).toBe(0);
    const exhausted = await spend(`/c/${c.id}`, key);
    expect(exhausted.status).toBe(402);
    expect(exhausted.headers.get("content-type")).toContain("application/problem+json");
    expect(exhausted.body).toMatchObject({ type: expect.stringMatching(/\/problems\/payment-required$/), help: { calls_used: 3, calls_included: 3 } });
  });

  it("answers 401 for another checkout's key and an unknown one of any shape; any other Authorization, or a HEAD, leaves the face an ordinary 402", async () => {
    const [a, b] = [await packageOf(2), await packageOf(2)];
    const keyOfA = (await buy(a.id)).body.package_key as string;
    // Never issued, whatever its shape (issue 44: a key without test_/live_ answered 402): 401 on a call and on the usage record alike.
    for (const key of [keyOfA, `pk_live_${"Z".repeat(32)}`, "pk_never_issued", "pk_", `pk_test_${"x".repeat(300)}`]) {
      for (const path of [`/c/${b.id}`, `/c/${b.id}/usage`]) {
        const r = await spend(path, key);
        expect([key.slice(0, 20), path, r.status, r.body.type]).toEqual([key.slice(0, 20), path, 401, expect.stringMatching(/\/problems\/unauthenticated$/)]);
      }
    }
    const other = await call("GET", `/c/${b.id}`, { headers: { Authorization: "Bearer sk_live_notours" } });
    expect(other.status).toBe(402);
    // A HEAD spends nothing: it is answered as the unpaid face.
    expect((await call("HEAD", `/c/${a.id}`, { headers: { Authorization: `Bearer ${keyOfA}` } })).status).toBe(402);
    expect((await spend(`/c/${a.id}/usage`, keyOfA)).body.calls_used).toBe(1);
  });

  it("a package key files a buyer report with its purchase attached; another checkout's key is 401", async () => {
    const [c, other] = [await packageOf(2), await packageOf(2)];
    const bought = await buy(c.id);
    const key = bought.body.package_key as string;
    const filed = await call("POST", `/v1/checkouts/${c.id}/reports`, { body: { category: "not_delivered" }, headers: { Authorization: `Bearer ${key}` } });
    expect(filed.status).toBe(201);
    expect(filed.body).toMatchObject({ kind: "buyer", receipt_id: bought.body.receipt.id });
    const wrong = await call("POST", `/v1/checkouts/${other.id}/reports`, { body: { category: "not_delivered" }, headers: { Authorization: `Bearer ${key}` } });
    expect(wrong.status).toBe(401);
  });

  it("gives the call back when the seller's origin fails (502, not charged) and counts the buyer's own request errors", async () => {
    const api = await switchableOrigin();
    try {
      const c = await packageOf(4, { origin_url: api.url });
      const key = (await buy(c.id)).body.package_key as string;
      api.status.code = 503;
      const failed = await spend(`/c/${c.id}`, key);
      expect(failed.status).toBe(502);
      expect(failed.body).toMatchObject({ fault: "seller", origin_status: 503, charged: false, calls_remaining: 3, help: { report: { method: "POST" } } });
      api.status.code = 404;
      const buyerError = await spend(`/c/${c.id}`, key);
      expect(buyerError.status).toBe(404);
      expect(buyerError.body).toMatchObject({ fault: "buyer", calls_remaining: 2, fulfillment: { origin_status: 404 } });
      api.status.code = 200;
      const usage = await spend(`/c/${c.id}/usage`, key);
      expect(usage.status).toBe(200);
      expect(usage.body).toMatchObject({
        object: "package_usage",
        checkout_id: c.id,
        status: "live",
        calls_included: 4,
        calls_used: 2,
        calls_remaining: 2,
        has_more: false,
        burn: { basis: "insufficient_usage", calls_per_day: null },
      });
      expect(
        usage.body.calls.map((x: { seq: number; status: number; counted: boolean; fault: string | null }) => [x.seq, x.status, x.counted, x.fault]),
      ).toEqual([
        [3, 404, true, "buyer"],
        [2, 503, false, "seller"],
        [1, 200, true, null],
      ]);
      expect(api.calls()).toBe(3);
      expect((await call("GET", `/c/${c.id}/usage`)).status).toBe(401);
    } finally {
      await api.close();
    }
  });

  it("50 concurrent calls on a key with 10 left: exactly 10 succeed, the others 402, and the origin is called 10 times", async () => {
    const c = await packageOf(11);
    const key = (await buy(c.id)).body.package_key as string;
    const before = origin.callsTo("/echo").length;
    const answers = await Promise.all(Array.from({ length: 50 }, () => spend(`/c/${c.id}`, key)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(40);
    expect(origin.callsTo("/echo").length - before).toBe(10);
    expect((await spend(`/c/${c.id}/usage`, key)).body).toMatchObject({ calls_used: 11, calls_remaining: 0, status: "exhausted" });
  });

  it("limits a key to 60 calls a minute: the 61st answers 429 with Retry-After, nothing spent", async () => {
    const c = await packageOf(100);
    const key = (await buy(c.id)).body.package_key as string;
    for (let i = 0; i < 60; i++) expect((await spend(`/c/${c.id}`, key)).status).toBe(200);
    const limited = await spend(`/c/${c.id}`, key);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await spend(`/c/${c.id}/usage`, key)).body.calls_used).toBe(61);
  });

  it("a per-tool mcp package refuses another tool on every call, spending nothing", async () => {
    const server: FakeMcpServer = await startFakeMcpServer({
      json: true,
      tools: [
        { name: "forecast", inputSchema: { type: "object" }, answer: (a) => `sunny in ${String(a.city)}` },
        { name: "admin", inputSchema: { type: "object" }, answer: () => "secret" },
      ],
    });
    try {
      const c = await packageOf(3, { origin_url: server.url, mcp_tool: "forecast" });
      const bought = await buy(c.id, `?arguments=${encodeURIComponent(JSON.stringify({ city: "Rome" }))}`);
      expect(bought.body.fulfillment).toMatchObject({ mode: "mcp", payload: { content: [{ type: "text", text: "sunny in Rome" }] } });
      const key = bought.body.package_key as string;
      const refused = await spend(`/c/${c.id}?tool=admin`, key);
      expect(refused.status).toBe(422);
      const ok = await spend(`/c/${c.id}?arguments=${encodeURIComponent(JSON.stringify({ city: "Oslo" }))}`, key);
      expect(ok.body).toMatchObject({ fulfillment: { mode: "mcp" }, calls_remaining: 1 });
    } finally {
      await server.close();
    }
  });

  it("live on the devchain: the official client buys a package, the key spends it without another payment, and voiding shows what it still owes", async () => {
    const chain = await devchainWallets(14);
    const liveBuyer = await chain.fundedBuyer(5_000_000n);
    const c = await packageOf(4, { test_mode: false, price_usd: "2.00" });
    // The official client refuses more than $1 a payment by default (spend controls): a $2.00 package needs a higher cap.
    const client = x402Client.fromConfig({ schemes: [], spendControls: { maxAmountPerPayment: "$5" } });
    registerExactEvmScheme(client, { signer: liveBuyer });
    const res = await wrapFetchWithPayment(fetch, client)(`${baseUrl()}/c/${c.id}?city=Lima`, { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { package_key: string; deliveries_remaining: number; receipt: { test_mode: boolean; total: number } };
    expect(body).toMatchObject({ deliveries_remaining: 3, receipt: { test_mode: false } });
    expect(body.package_key).toMatch(/^pk_live_/);
    const paid = 5_000_000n - BigInt(body.receipt.total);
    expect(await chain.balance(liveBuyer.address)).toBe(paid);
    expect((await spend(`/c/${c.id}`, body.package_key)).body).toMatchObject({ calls_remaining: 2, test_mode: false });
    expect(await chain.balance(liveBuyer.address)).toBe(paid);

    const voided = await call("DELETE", `/v1/checkouts/${c.id}`, { key: seller.key });
    expect(voided.body.liabilities).toEqual({ live_keys: 1, calls_unspent: 2, unearned: { amount: "1.000000", currency: "USD" } });
    // A void never takes what was bought: the key still spends.
    expect((await spend(`/c/${c.id}`, body.package_key)).body.calls_remaining).toBe(1);
  });
});
