import { call, newCheckout, newSeller } from "../src/http";

describe("checkouts over REST", () => {
  let key: string;
  let wallet: string;
  beforeAll(async () => {
    const s = await newSeller();
    key = s.key;
    wallet = s.wallet.address;
  });

  it("creates an inline checkout with url, test_url, status and pay_to from the payout wallet", async () => {
    const r = await call("POST", "/v1/checkouts", {
      key,
      body: {
        title: "Weather",
        price_usd: "0.10",
        description: "Today's weather",
        payload: { temp_c: 21 },
        freshness: "hourly",
        input_schema: { type: "object" },
        expires_in_minutes: 60,
      },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      id: expect.stringMatching(/^chk_/),
      status: "open",
      title: "Weather",
      price_usd: "0.100000",
      pay_to: wallet,
      test_mode: true,
      payload: { temp_c: 21 },
      freshness: "hourly",
      input_schema: { type: "object" },
    });
    expect(r.body.url).toMatch(new RegExp(`/c/${r.body.id}$`));
    expect(r.body.test_url).toBe(`${r.body.url}/test`);
    expect(new Date(r.body.expires_at).getTime() - new Date(r.body.created_at).getTime()).toBe(3_600_000);
  });

  it("description: as sent on create, read and the 402's offer card; null when absent; a PATCH changes it and null clears it", async () => {
    const text = "Hourly temperature, wind and rain for one city: ünïcode kept as sent.";
    const c = await newCheckout(key, { title: "Described", description: text });
    expect(c.description).toBe(text);
    expect((await call("GET", `/v1/checkouts/${c.id}`, { key })).body.description).toBe(text);
    expect((await call("GET", `/c/${c.id}/test`)).body.offer.description).toBe(text);
    expect((await newCheckout(key, { title: "Undescribed" })).description).toBeNull();
    expect((await call("PATCH", `/v1/checkouts/${c.id}`, { key, body: { description: "Changed." } })).body.description).toBe("Changed.");
    expect((await call("GET", `/c/${c.id}`)).body.offer.description).toBe("Changed.");
    expect((await call("PATCH", `/v1/checkouts/${c.id}`, { key, body: { description: null } })).body.description).toBeNull();
    expect((await call("GET", `/v1/checkouts/${c.id}`, { key })).body.description).toBeNull();
    expect((await call("POST", "/v1/checkouts", { key, body: { title: "Bad", price_usd: "0.10", payload: 1, description: 7 } })).status).toBe(422);
  });

  it("rejects unknown and invalid fields with 422 errors[]", async () => {
    const r = await call("POST", "/v1/checkouts", { key, body: { title: 5, price_usd: "ten", colour: "red", reusable: "yes" } });
    expect(r.status).toBe(422);
    expect(r.body.type).toMatch(/\/problems\/invalid-request$/);
    expect(r.body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: "title" }),
        { field: "colour", reason: "is not a known field" },
        expect.objectContaining({ field: "reusable" }),
      ]),
    );
    const price = await call("POST", "/v1/checkouts", { key, body: { title: "x", price_usd: "ten" } });
    expect(price.status).toBe(422);
    expect(price.body.errors).toEqual([expect.objectContaining({ field: "price_usd" })]);
    const missing = await call("POST", "/v1/checkouts", { key, body: {} });
    expect(missing.body.errors).toEqual(
      expect.arrayContaining([
        { field: "title", reason: "is required" },
        { field: "price_usd", reason: "is required" },
      ]),
    );
    const later = await call("POST", "/v1/checkouts", { key, body: { title: "x", price_usd: "1", package_ttl_days: 30 } });
    expect(later.status).toBe(422);
    expect(later.body.errors).toEqual([{ field: "package_ttl_days", reason: "applies only to a package (send max_deliveries)" }]);
  });

  it("lists newest first, one entry per product with a test object", async () => {
    const s = await newSeller();
    const a = await newCheckout(s.key, { title: "first" });
    const b = await newCheckout(s.key, { title: "second" });
    const list = await call("GET", "/v1/checkouts", { key: s.key });
    expect(list.body.checkouts.map((c: { id: string }) => c.id)).toEqual([b.id, a.id]);
    expect(list.body.checkouts[0].test).toEqual({ id: b.id, url: b.test_url });
    expect((await call("GET", `/v1/checkouts/${a.id}`, { key: s.key })).body.id).toBe(a.id);
    expect((await call("GET", `/v1/checkouts/${a.id}`, { key })).status).toBe(404);
  });

  it("goes live idempotently, with a rehearsal block", async () => {
    const c = await newCheckout(key);
    const first = await call("POST", `/v1/checkouts/${c.id}/go-live`, { key });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id: c.id, url: c.url, test_mode: false, already_live: false, rehearsal: { test_url: c.test_url } });
    const second = await call("POST", `/v1/checkouts/${c.id}/go-live`, { key });
    expect(second.body).toMatchObject({ id: c.id, already_live: true, armed_at: first.body.armed_at });
  });

  it("replays a create with the same Idempotency-Key; a different body is 422", async () => {
    const idem = `idem-${Date.now()}`;
    const body = { title: "Once", price_usd: "1.00" };
    const first = await call("POST", "/v1/checkouts", { key, body, headers: { "idempotency-key": idem } });
    const again = await call("POST", "/v1/checkouts", { key, body, headers: { "idempotency-key": idem } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(first.headers.get("idempotency-replayed")).toBeNull();
    const other = await call("POST", "/v1/checkouts", { key, body: { ...body, title: "Twice" }, headers: { "idempotency-key": idem } });
    expect(other.status).toBe(422);
  });
});
