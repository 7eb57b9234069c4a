import { startWebhookReceiver } from "@c402/testkit/webhook-receiver";
import { encodeHeader } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { call, newSeller } from "../src/http";
import { seriesOnceIn, signedPeriod, subscribe } from "../src/series";

/**
 * Recurring series on the rehearsal face (spec, Schedule; ADR 20): signed as
 * a live one, settled simulated, on a compressed clock (the e2e target sets
 * SCHEDULE_REHEARSAL_DAY_SECONDS to 6, so a daily period lasts 6 s), with the
 * same events and receipts marked test_mode; the seller's and the buyer's
 * cancels; the MCP schedule tools; refusals. The live series, on the chain's
 * clock, is series.clock.test.ts.
 */

async function rehearsalSeries(periods: number) {
  const seller = await newSeller();
  const created = await call("POST", "/v1/checkouts", {
    key: seller.key,
    body: { title: "Daily tip", price_usd: "0.50", payload: { tip: "hydrate" }, schedule_interval_days: 1, schedule_periods: periods, reusable: true },
  });
  expect(created.status).toBe(201);
  return { seller, checkoutId: created.body.id as string };
}

describe("recurring series on the rehearsal face (compressed clock)", () => {
  it("runs a 3-period series to completed: three simulated receipts, the schedule.* events and checkout.paid marked test_mode", async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { seller, checkoutId } = await rehearsalSeries(3);
      await call("POST", "/v1/webhooks", {
        key: seller.key,
        body: { url: `${receiver.url}/s`, events: ["checkout.paid", "schedule.started", "schedule.charged", "schedule.completed"] },
      });
      const unpaid = await call("GET", `/c/${checkoutId}/test`);
      expect(unpaid.status).toBe(402);
      expect(unpaid.body.accepts[0].extra.schedule).toEqual({
        interval_days: 1,
        periods: 3,
        windows: [
          { period: 1, opens_after_seconds: 6, closes_after_seconds: 12 },
          { period: 2, opens_after_seconds: 12, closes_after_seconds: 18 },
        ],
      });
      const { paid, prepared } = await subscribe(`/c/${checkoutId}/test`);
      expect(prepared.schedule.map((p: { period: number }) => p.period)).toEqual([1, 2]);
      expect(paid.status).toBe(200);
      expect(paid.body.receipt.test_mode).toBe(true);
      expect(paid.body.schedule).toMatchObject({ status: "active", periods: 3, periods_settled: 1, url: expect.stringMatching(/\/schedule\/sch_/) });
      const id = paid.body.schedule.id as string;
      const done = await seriesOnceIn(seller.key, id, (s) => s.status !== "active", 45_000);
      expect(done).toMatchObject({ status: "completed", test_mode: true, periods_settled: 3 });
      expect(done.periods_detail.map((p: { status: string }) => p.status)).toEqual(["settled", "settled", "settled"]);
      await receiver.waitFor(6, 20_000);
      await new Promise((r) => setTimeout(r, 1_000));
      const events = receiver.received.map((d) => JSON.parse(d.rawBody) as { event: string; data: Record<string, any> });
      expect(events.map((e) => e.event).sort()).toEqual(
        ["checkout.paid", "checkout.paid", "checkout.paid", "schedule.started", "schedule.charged", "schedule.charged", "schedule.completed"].sort(),
      );
      expect(events.find((e) => e.event === "schedule.started")!.data.schedule).toMatchObject({ id, status: "active", periods: 3, periods_settled: 1 });
      // The seller's list (a test key lists test-mode series), filtered.
      const list = await call("GET", `/v1/schedules?checkout_id=${checkoutId}&status=completed`, { key: seller.key });
      expect(list.status).toBe(200);
      expect(list.body.schedules.map((s: { id: string }) => s.id)).toEqual([id]);
      expect((await call("GET", `/v1/schedules?checkout_id=${checkoutId}&status=active`, { key: seller.key })).body.schedules).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it("the buyer cancels a test-mode series by naming its payer; the seller cancels another with a reason; settled periods stay settled", async () => {
    const { seller, checkoutId } = await rehearsalSeries(24);
    const first = await subscribe(`/c/${checkoutId}/test`);
    const id = first.paid.body.schedule.id as string;
    await seriesOnceIn(seller.key, id, (s) => s.status === "active");
    const view = await call("GET", `/schedule/${id}`);
    expect(view.status).toBe(200);
    expect(view.headers.get("access-control-allow-origin")).toBe("*");
    expect(view.body.cancel.onchain.length).toBeGreaterThan(0);
    expect((await call("POST", `/schedule/${id}/cancel`, { body: { payer: privateKeyToAccount(generatePrivateKey()).address } })).status).toBe(403);
    const byBuyer = await call("POST", `/schedule/${id}/cancel`, { body: { payer: first.buyer.address } });
    expect(byBuyer.status).toBe(200);
    expect(byBuyer.body.schedule).toMatchObject({ status: "cancelled" });
    expect((await call("GET", `/schedule/${id}`)).body.cancel).toBeNull();

    const second = await subscribe(`/c/${checkoutId}/test`);
    const other = second.paid.body.schedule.id as string;
    await seriesOnceIn(seller.key, other, (s) => s.status === "active");
    const bySeller = await call("POST", `/v1/schedules/${other}/cancel`, { key: seller.key, body: { reason: "product retired" } });
    expect(bySeller.status).toBe(200);
    const cancelled = await seriesOnceIn(seller.key, other, (s) => s.status === "cancelled");
    expect(cancelled.periods_detail[0].status).toBe("settled");
    // Another seller sees neither.
    const stranger = await newSeller();
    expect((await call("GET", `/v1/schedules/${other}`, { key: stranger.key })).status).toBe(404);
    expect((await call("POST", `/v1/schedules/${other}/cancel`, { key: stranger.key, body: {} })).status).toBe(404);
  }, 60_000);

  it("refuses a purchase whose held periods are missing or tampered, moving nothing and starting no series", async () => {
    const { seller, checkoutId } = await rehearsalSeries(3);
    const { buyer, prepared, period0, schedule } = await (async () => {
      const buyer = privateKeyToAccount(generatePrivateKey());
      const prepared = await call("POST", `/c/${checkoutId}/test/prepare`, { body: { payer: buyer.address } });
      return {
        buyer,
        prepared: prepared.body,
        period0: await signedPeriod(buyer, prepared.body),
        schedule: await Promise.all((prepared.body.schedule as never[]).map((p) => signedPeriod(buyer, p))),
      };
    })();
    expect(buyer.address).toBe(prepared.payload_stub.payload.authorization.from);
    const header = { "payment-signature": encodeHeader(period0 as never) };
    // Only period 0 (as an x402 client would pay): refused, naming /prepare and the schedule body.
    const alone = await call("GET", `/c/${checkoutId}/test`, { headers: header });
    expect(alone.status).toBe(402);
    expect(JSON.stringify(alone.body)).toMatch(/schedule/);
    // One held period short, and a held period whose amount was changed after signing.
    expect((await call("POST", `/c/${checkoutId}/test/pay`, { headers: header, body: { schedule: schedule.slice(0, 1) } })).status).toBe(402);
    const tampered = structuredClone(schedule) as unknown as { payload: { authorization: { value: string } } }[];
    tampered[1]!.payload.authorization.value = "1";
    expect((await call("POST", `/c/${checkoutId}/test/pay`, { headers: header, body: { schedule: tampered } })).status).toBe(402);
    // Not a list of objects: 422 naming the field.
    const bad = await call("POST", `/c/${checkoutId}/test/pay`, { headers: header, body: { schedule: "all of them" } });
    expect(bad.status).toBe(422);
    expect((await call("GET", `/v1/schedules?checkout_id=${checkoutId}`, { key: seller.key })).body.schedules).toEqual([]);
    // The genuine purchase still goes through afterwards.
    expect((await call("POST", `/c/${checkoutId}/test/pay`, { headers: header, body: { schedule } })).status).toBe(200);
  }, 60_000);

  it("the MCP tools create a series checkout (create_checkout with the schedule fields), then list, read and cancel the seller's series", async () => {
    const seller = await newSeller();
    const tool = (name: string, args: Record<string, unknown>) =>
      call("POST", "/mcp", { key: seller.key, body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } } });
    const created = await tool("create_checkout", {
      title: "Daily tip",
      price_usd: "0.50",
      payload: { tip: "hydrate" },
      schedule_interval_days: 1,
      schedule_periods: 24,
    });
    expect(created.body.result.isError ?? false).toBe(false);
    expect(created.body.result.structuredContent.schedule).toEqual({ interval_days: 1, periods: 24 });
    const checkoutId = created.body.result.structuredContent.id as string;
    const refused = await tool("create_checkout", { title: "Half a series", price_usd: "0.50", schedule_periods: 4 });
    expect(JSON.stringify(refused.body.error)).toContain("schedule_interval_days");
    const { paid } = await subscribe(`/c/${checkoutId}/test`);
    const id = paid.body.schedule.id as string;
    await seriesOnceIn(seller.key, id, (s) => s.status === "active");
    const listed = await tool("list_schedules", { checkout_id: checkoutId });
    expect(listed.body.result.structuredContent.schedules.map((s: { id: string }) => s.id)).toEqual([id]);
    const got = await tool("get_schedule", { id });
    expect(got.body.result.structuredContent).toMatchObject({ id, periods: 24 });
    const cancelled = await tool("cancel_schedule", { id, reason: "testing" });
    expect(cancelled.body.result.isError ?? false).toBe(false);
    expect((await call("GET", `/v1/schedules/${id}`, { key: seller.key })).body.status).toBe("cancelled");
  }, 60_000);
});
