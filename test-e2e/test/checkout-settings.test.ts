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

  it("validates the fields of features not built yet, then refuses them by name", async () => {
    const seller = await newSeller();
    const create = (extra: Record<string, unknown>) => call("POST", "/v1/checkouts", { key: seller.key, body: { title: "x", price_usd: "1", ...extra } });
    const refused = await create({ schedule_interval_days: 7, schedule_periods: 4 });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(["schedule_interval_days", "schedule_periods"]);
    expect(refused.body.errors.every((e: { reason: string }) => e.reason.includes("not available"))).toBe(true);
    const invalid = await create({ schedule_periods: 30, platform_fee_bps: 250 });
    expect(invalid.status).toBe(422);
    expect(invalid.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: "schedule_periods", reason: "must be <= 24" })]));
    const fee = await create({ platform_fee_bps: 250 });
    expect(fee.status).toBe(422);
    expect(fee.body.errors).toEqual([expect.objectContaining({ field: "platform_fee_bps", reason: expect.stringContaining("platform mode") })]);
  });
});
