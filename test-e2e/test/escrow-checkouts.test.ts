import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { baseUrl, call, decoded, newSeller, payRehearsal } from "../src/http";

/**
 * Escrow checkout creates (spec, Endpoints: POST /v1/escrow-checkouts and the
 * escrow create fields; the create table's escrow_offer; ADR 19): the terms
 * the escrow service resolves, frozen by catalog on an esc_ checkout whose
 * face is /e/{id}; the escrow twin of escrow_offer optional; the account's
 * escrow policy; each refusal (content, fulfillment, series, the seller as
 * its own arbiter, no arbiter, a sub-seller's create naming none); and the
 * idempotent create.
 */

const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;
const STANDARD = { settle_window: 259_200, hold_window: 604_800, backstop_window: 2_592_000 };
const ESC_ID = /^esc_[0-9A-Za-z]{24}$/;
const fieldsOf = (body: { errors?: { field: string }[] }) => (body.errors ?? []).map((e) => e.field);

/** A seller whose escrow settings name an EVM arbiter (and whatever else `settings` sets). */
async function escrowSeller(settings: Record<string, unknown> = {}) {
  const seller = await newSeller();
  const arbiter = freshAddress();
  const put = await call("PUT", "/v1/account/escrow", { key: seller.key, body: { escrow_arbiter_evm: arbiter, ...settings } });
  if (put.status !== 200) throw new Error(`escrow settings: ${put.status} ${put.text}`);
  return { ...seller, arbiter };
}

const goods = { title: "Hand-made chair", price_usd: "120.00", payload: { order: "ships in 5 days" } };

describe("escrow checkouts (POST /v1/escrow-checkouts)", () => {
  it("creates an esc_ checkout at /e/{id} with its terms frozen, and get and list answer what the create did", async () => {
    const seller = await escrowSeller();
    const r = await call("POST", "/v1/escrow-checkouts", { key: seller.key, body: goods });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      id: expect.stringMatching(ESC_ID),
      url: `${baseUrl()}/e/${r.body.id}`,
      test_url: `${baseUrl()}/e/${r.body.id}/test`,
      pay_to: seller.wallet.address,
      fulfillment: "inline",
      escrow: { preset: "standard", ...STANDARD, arbiter_evm: seller.arbiter, arbiter_svm: null },
      escrow_twin: null,
    });
    const got = await call("GET", `/v1/checkouts/${r.body.id}`, { key: seller.key });
    expect(got.body).toEqual(r.body);
    const list = await call("GET", "/v1/checkouts", { key: seller.key });
    expect(list.body.checkouts.find((c: { id: string }) => c.id === r.body.id)).toMatchObject({ url: r.body.url, escrow: r.body.escrow, escrow_twin: null });
  });

  it("takes the escrow create fields: a preset, windows one by one, an arbiter named on the create", async () => {
    const seller = await escrowSeller();
    const arbiter = freshAddress();
    const r = await call("POST", "/v1/escrow-checkouts", {
      key: seller.key,
      body: { ...goods, escrow_preset: "instant", escrow_hold_window: 7_200, arbiter_evm: arbiter.toLowerCase() },
    });
    expect(r.status).toBe(201);
    expect(r.body.escrow).toMatchObject({ settle_window: 3_600, hold_window: 7_200, arbiter_evm: arbiter });
    expect((await call("GET", `/v1/checkouts/${r.body.id}`, { key: seller.key })).body.escrow).toEqual(r.body.escrow);
  });

  it("refuses windows outside the limits with 422 naming each field (the escrow service's rules)", async () => {
    const seller = await escrowSeller();
    const r = await call("POST", "/v1/escrow-checkouts", { key: seller.key, body: { ...goods, escrow_settle_window: 60 } });
    expect(r.status).toBe(422);
    expect(fieldsOf(r.body)).toContain("escrow_settle_window");
  });

  it("refuses content (400), a fulfillment other than inline or relay, and series fields (422)", async () => {
    const seller = await escrowSeller();
    const withContent = await call("POST", "/v1/escrow-checkouts", { key: seller.key, body: { ...goods, payload: "the article", content: {} } });
    expect(withContent.status).toBe(400);
    expect(withContent.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(fieldsOf(withContent.body)).toEqual(["content"]);
    const offered = await call("POST", "/v1/checkouts", { key: seller.key, body: { ...goods, payload: "the article", content: {}, escrow_offer: "optional" } });
    expect(offered.status).toBe(400);
    expect(fieldsOf(offered.body)).toEqual(["escrow_offer"]);

    const mcp = await call("POST", "/v1/escrow-checkouts", {
      key: seller.key,
      body: { title: "A tool", price_usd: "1.00", fulfillment: "mcp", origin_url: "https://mcp.example/mcp" },
    });
    expect(mcp.status).toBe(422);
    expect(fieldsOf(mcp.body)).toContain("fulfillment");

    const series = await call("POST", "/v1/escrow-checkouts", { key: seller.key, body: { ...goods, schedule_interval_days: 30, schedule_periods: 3 } });
    expect(series.status).toBe(422);
    expect(fieldsOf(series.body)).toEqual(["schedule_interval_days", "schedule_periods"]);
    expect(series.body.errors[0].reason).toMatch(/escrow/);
  });

  it("refuses the seller's own payout wallet as the arbiter, and a create with no EVM arbiter anywhere (no rail to sell on)", async () => {
    const seller = await escrowSeller();
    const own = await call("POST", "/v1/escrow-checkouts", { key: seller.key, body: { ...goods, arbiter_evm: seller.wallet.address } });
    expect(own.status).toBe(422);
    expect(fieldsOf(own.body)).toEqual(["arbiter_evm"]);
    expect(own.body.errors[0].reason).toMatch(/pay_to/);

    const bare = await newSeller();
    const none = await call("POST", "/v1/escrow-checkouts", { key: bare.key, body: goods });
    expect(none.status).toBe(422);
    expect(fieldsOf(none.body)).toEqual(["arbiter_evm"]);
  });

  it("a platform account creating for a sub-seller must name the arbiter on the create", async () => {
    const seller = await escrowSeller();
    const put = await call("PUT", "/v1/account/platform", { key: seller.key, body: { platform_account: true, platform_fee_bps: 0 } });
    expect(put.status).toBe(200);
    const forSubSeller = { ...goods, pay_to: freshAddress() };
    const unnamed = await call("POST", "/v1/escrow-checkouts", { key: seller.key, body: forSubSeller });
    expect(unnamed.status).toBe(422);
    expect(fieldsOf(unnamed.body)).toEqual(["arbiter_evm"]);
    const arbiter = freshAddress();
    const named = await call("POST", "/v1/escrow-checkouts", { key: seller.key, body: { ...forSubSeller, arbiter_evm: arbiter } });
    expect(named.status).toBe(201);
    expect(named.body.escrow.arbiter_evm).toBe(arbiter);
  });

  it("is idempotent: a repeat answers the original; the same key and body on POST /v1/checkouts is another request", async () => {
    const seller = await escrowSeller();
    const headers = { "idempotency-key": `esc-${Date.now()}` };
    const first = await call("POST", "/v1/escrow-checkouts", { key: seller.key, body: goods, headers });
    const again = await call("POST", "/v1/escrow-checkouts", { key: seller.key, body: goods, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
    const plain = await call("POST", "/v1/checkouts", { key: seller.key, body: goods, headers });
    expect(plain.status).toBe(422);
    expect(fieldsOf(plain.body)).toEqual(["Idempotency-Key"]);
  });
});

describe("escrow_offer and the account's escrow policy (POST /v1/checkouts)", () => {
  it("escrow_offer optional mints an escrow twin, linked both ways, under the account's default terms; the two go live together", async () => {
    const seller = await escrowSeller({ escrow_default_preset: "shipping" });
    const r = await call("POST", "/v1/checkouts", { key: seller.key, body: { ...goods, escrow_offer: "optional" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ id: expect.stringMatching(/^chk_/), url: `${baseUrl()}/c/${r.body.id}`, escrow: null });
    expect(r.body.escrow_twin).toEqual({ id: expect.stringMatching(ESC_ID), url: `${baseUrl()}/e/${r.body.escrow_twin.id}` });
    const twin = await call("GET", `/v1/checkouts/${r.body.escrow_twin.id}`, { key: seller.key });
    expect(twin.status).toBe(200);
    expect(twin.body).toMatchObject({
      title: goods.title,
      price_usd: r.body.price_usd,
      pay_to: r.body.pay_to,
      payload: goods.payload,
      escrow: { preset: "shipping", arbiter_evm: seller.arbiter },
      escrow_twin: { id: r.body.id, url: r.body.url },
    });
    const listed = (await call("GET", "/v1/checkouts", { key: seller.key })).body.checkouts.map((c: { id: string }) => c.id);
    expect(listed).toEqual(expect.arrayContaining([r.body.id, r.body.escrow_twin.id]));
    // The two go live together: the plain face advertises the twin.
    expect((await call("POST", `/v1/checkouts/${r.body.id}/go-live`, { key: seller.key })).status).toBe(200);
    expect((await call("GET", `/v1/checkouts/${r.body.escrow_twin.id}`, { key: seller.key })).body.test_mode).toBe(false);
  });

  it("the plain checkout's 402 advertises its escrow twin (extra.escrowAvailable), and a payment signed for it is taken as issued", async () => {
    const seller = await escrowSeller();
    const r = await call("POST", "/v1/checkouts", { key: seller.key, body: { ...goods, escrow_offer: "optional" } });
    const unpaid = await call("GET", `/c/${r.body.id}/test`);
    const required = decoded(unpaid.headers.get("payment-required"));
    expect(required.accepts[0]).toMatchObject({ scheme: "exact", extra: { escrowAvailable: r.body.escrow_twin.id } });
    // The twin itself advertises nothing more: it is the escrow face.
    const twin = decoded((await call("GET", `/e/${r.body.escrow_twin.id}/test`)).headers.get("payment-required"));
    expect(twin.accepts[0].extra.escrowAvailable).toBeUndefined();
    const paid = await payRehearsal(r.body.id);
    expect(paid.body.receipt).toMatchObject({ checkout_id: r.body.id, test_mode: true });
  });

  it("escrow_offer required makes the create an escrow one", async () => {
    const seller = await escrowSeller();
    const r = await call("POST", "/v1/checkouts", { key: seller.key, body: { ...goods, escrow_offer: "required" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ id: expect.stringMatching(ESC_ID), escrow: { preset: "standard", ...STANDARD }, escrow_twin: null });
  });

  it("policy always makes every create an escrow one; disabled refuses escrow creates (409) and keeps plain ones", async () => {
    const always = await escrowSeller({ escrow_policy: "always" });
    const r = await call("POST", "/v1/checkouts", { key: always.key, body: goods });
    expect(r.status).toBe(201);
    expect(r.body.id).toMatch(ESC_ID);
    const article = await call("POST", "/v1/checkouts", { key: always.key, body: { ...goods, payload: "the article", content: {} } });
    expect(article.status).toBe(400);
    expect(fieldsOf(article.body)).toEqual(["content"]);

    const disabled = await escrowSeller({ escrow_policy: "disabled" });
    for (const [path, body] of [
      ["/v1/escrow-checkouts", goods],
      ["/v1/checkouts", { ...goods, escrow_offer: "optional" }],
      ["/v1/checkouts", { ...goods, escrow_offer: "required" }],
    ] as const) {
      const refused = await call("POST", path, { key: disabled.key, body });
      expect([path, refused.status]).toEqual([path, 409]);
      expect(refused.body.detail.message).toMatch(/escrow policy is disabled/);
    }
    const plain = await call("POST", "/v1/checkouts", { key: disabled.key, body: goods });
    expect(plain.status).toBe(201);
    expect(plain.body).toMatchObject({ id: expect.stringMatching(/^chk_/), escrow: null, escrow_twin: null });
  });

  it("the MCP create_checkout tool takes escrow_offer as REST does", async () => {
    const seller = await escrowSeller();
    const r = await call("POST", "/mcp", {
      key: seller.key,
      body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "create_checkout", arguments: { ...goods, escrow_offer: "optional" } } },
    });
    const created = r.body.result?.structuredContent;
    expect(created).toMatchObject({ id: expect.stringMatching(/^chk_/), escrow_twin: { id: expect.stringMatching(ESC_ID) } });
  });
});
