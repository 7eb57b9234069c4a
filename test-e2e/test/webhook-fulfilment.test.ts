import { eventually } from "@c402/testkit";
import { call, newCheckout, newSeller, payRehearsal } from "../src/http";

/**
 * Webhook checkouts over the running services: the sale settles like inline
 * goods, but the seller fulfils it; its receipt awaits fulfilment until the
 * seller closes it out (POST /v1/receipts/{id}/fulfilled), which is recorded
 * as an account event.
 */
describe("webhook fulfilment", () => {
  let seller: Awaited<ReturnType<typeof newSeller>>;
  let readOnly: string;
  const webhook = () => newCheckout(seller.key, { title: "Hand-made map", fulfillment: "webhook", payload: undefined, reusable: true });

  beforeAll(async () => {
    seller = await newSeller();
    readOnly = (await call("POST", "/v1/keys", { key: seller.key, body: { scope: "read_only" } })).body.secret;
  });

  it("creates a webhook checkout (no goods: payload and origin fields refused by name)", async () => {
    expect(await webhook()).toMatchObject({ fulfillment: "webhook", payload: null, origin_url: null });
    const refused = await call("POST", "/v1/checkouts", {
      key: seller.key,
      body: { title: "x", price_usd: "1", fulfillment: "webhook", payload: { a: 1 }, origin_method: "GET" },
    });
    expect([refused.status, refused.body.errors.map((e: { field: string }) => e.field)]).toEqual([422, ["payload", "origin_method"]]);
  });

  it("a sale awaits fulfilment until the seller marks it fulfilled, once; then it leaves the list", async () => {
    const c = await webhook();
    const sale = await payRehearsal(c.id);
    expect(sale.body.fulfillment).toMatchObject({ mode: "webhook", payload: null, status: "awaiting_fulfilment" });
    expect(sale.body.receipt.delivery).toEqual({ outcome: "awaiting_fulfilment", fulfilled_at: null });
    const second = await payRehearsal(c.id);

    const listed = await call("GET", "/v1/receipts/awaiting-fulfilment?limit=1", { key: readOnly });
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ receipts: [{ id: second.body.receipt.id }], has_more: true });
    const next = await call("GET", `/v1/receipts/awaiting-fulfilment?limit=1&cursor=${listed.body.next_cursor}`, { key: readOnly });
    expect(next.body.receipts.map((r: { id: string }) => r.id)).toEqual([sale.body.receipt.id]);

    expect((await call("POST", `/v1/receipts/${sale.body.receipt.id}/fulfilled`, { key: readOnly })).status).toBe(403);
    const marked = await call("POST", `/v1/receipts/${sale.body.receipt.id}/fulfilled`, { key: seller.key });
    expect(marked.status).toBe(200);
    expect(marked.body).toMatchObject({
      id: sale.body.receipt.id,
      already_fulfilled: false,
      delivery: { outcome: "fulfilled", fulfilled_at: expect.any(String) },
    });
    const again = await call("POST", `/v1/receipts/${sale.body.receipt.id}/fulfilled`, { key: seller.key });
    expect(again.body).toMatchObject({ already_fulfilled: true, delivery: { fulfilled_at: marked.body.delivery.fulfilled_at } });
    expect((await call("GET", `/r/${sale.body.receipt.id}`)).body.delivery).toEqual(marked.body.delivery);

    const after = await call("GET", "/v1/receipts/awaiting-fulfilment", { key: readOnly });
    expect(after.body.receipts.map((r: { id: string }) => r.id)).toEqual([second.body.receipt.id]);
    const events = await eventually(
      async () => (await call("GET", "/v1/account/events?action=receipt.", { key: seller.key })).body.events as { action: string; object_id: string }[],
      (e) => e.length > 0,
    );
    expect(events).toEqual([expect.objectContaining({ action: "receipt.fulfilled", object_id: sale.body.receipt.id, test_mode: true })]);
  });

  it("another seller's receipt is 404; an inline sale has nothing to close out (409)", async () => {
    const c = await webhook();
    const sale = await payRehearsal(c.id);
    const other = await newSeller();
    expect((await call("POST", `/v1/receipts/${sale.body.receipt.id}/fulfilled`, { key: other.key })).status).toBe(404);
    expect((await call("GET", "/v1/receipts/awaiting-fulfilment", { key: other.key })).body.receipts).toEqual([]);
    const inline = await payRehearsal((await newCheckout(seller.key, { reusable: true })).id);
    const refused = await call("POST", `/v1/receipts/${inline.body.receipt.id}/fulfilled`, { key: seller.key });
    expect([refused.status, refused.body.type]).toEqual([409, expect.stringMatching(/\/problems\/conflict$/)]);
    expect((await call("POST", "/v1/receipts/pay_nope/fulfilled", { key: seller.key })).status).toBe(404);
  });
});
