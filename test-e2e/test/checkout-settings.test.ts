import { call, newCheckout, newSeller, payRehearsal } from "../src/http";

/**
 * The create fields a checkout keeps as sent: `parties` travel verbatim to the
 * receipt (JSON and page); the other settings read back; fields whose feature
 * is not built are validated, then refused by name.
 */
describe("checkout settings", () => {
  it("carries the declared parties verbatim to the receipt, and reads every setting back", async () => {
    const seller = await newSeller();
    const parties = { buyer: { name: "Ada <Lovelace>", email: "ada@example.com", ref: "cust_42" }, seller: { name: "Tide Co", ref: "sub-7" } };
    const c = await newCheckout(seller.key, { parties, wallet_button: true, test_delivery_daily_cap: 5, platform_fee_bps: 0 });
    expect(c).toMatchObject({ parties, wallet_button: true, test_delivery_daily_cap: 5, platform_fee_bps: 0, inherit_account_payouts: true });
    expect((await call("GET", `/v1/checkouts/${c.id}`, { key: seller.key })).body).toMatchObject({ parties, wallet_button: true });

    const paid = await payRehearsal(c.id);
    const receipt = await call("GET", `/r/${paid.body.receipt.id}`, { headers: { accept: "application/json" } });
    expect(receipt.body.parties).toEqual(parties);
    const page = await call("GET", `/r/${paid.body.receipt.id}`, { headers: { accept: "text/html" } });
    expect(page.text).toContain("Ada &#60;Lovelace&#62;");
    expect(page.text).toContain("sub-7");
  });

  it("validates the series fields (a series is created and read back with its schedule) and the platform fee, naming each", async () => {
    const seller = await newSeller();
    const create = (extra: Record<string, unknown>) => call("POST", "/v1/checkouts", { key: seller.key, body: { title: "x", price_usd: "1", ...extra } });
    const series = await create({ schedule_interval_days: 7, schedule_periods: 4 });
    expect(series.status).toBe(201);
    expect(series.body.schedule).toEqual({ interval_days: 7, periods: 4 });
    expect((await call("GET", `/v1/checkouts/${series.body.id}`, { key: seller.key })).body.schedule).toEqual({ interval_days: 7, periods: 4 });
    const half = await create({ schedule_periods: 4 });
    expect(half.status).toBe(422);
    expect(half.body.errors).toEqual([expect.objectContaining({ field: "schedule_interval_days", reason: expect.stringContaining("both or neither") })]);
    const invalid = await create({ schedule_periods: 30, platform_fee_bps: 250 });
    expect(invalid.status).toBe(422);
    expect(invalid.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: "schedule_periods", reason: "must be <= 24" })]));
    const fee = await create({ platform_fee_bps: 250 });
    expect(fee.status).toBe(422);
    expect(fee.body.errors).toEqual([expect.objectContaining({ field: "platform_fee_bps", reason: expect.stringContaining("platform mode") })]);
  });
});
