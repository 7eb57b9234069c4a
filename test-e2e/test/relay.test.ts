import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { encodeHeader, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { devchainWallets, type DevchainWallets } from "../src/devchain";
import { baseUrl, call, decoded, newCheckout, newSeller } from "../src/http";

/**
 * Relay checkouts over the running services: the buyer pays, the service calls
 * the seller's origin (a real HTTP server on loopback) once, settles only what
 * the spec's charge table charges, and answers the origin's answer and the
 * receipt in one response, on both faces.
 */

const buyer = privateKeyToAccount(generatePrivateKey());
const ORIGIN_SECRET = "origin-secret-Zq7";

async function signed(path: string, validForSeconds?: number) {
  const r = await call("GET", path.split("?")[0] as string);
  expect(r.status).toBe(402);
  const required = decoded(r.headers.get("payment-required"));
  const requirement = required.accepts[0] as PaymentRequirements;
  const overrides = validForSeconds === undefined ? {} : { validBefore: String(Math.floor(Date.now() / 1000) + validForSeconds) };
  return encodeHeader(await signExactEvmPayment(buyer, requirement, { resourceUrl: required.resource.url, overrides }));
}

const pay = (path: string, payment: string) => call("GET", path, { headers: { "PAYMENT-SIGNATURE": payment } });

describe("relay checkouts: paid only on delivery", () => {
  let origin: FakeOrigin;
  let seller: Awaited<ReturnType<typeof newSeller>>;
  const relay = (path: string, extra: Record<string, unknown> = {}) =>
    newCheckout(seller.key, { title: `Relay ${path}`, price_usd: "0.10", payload: undefined, origin_url: `${origin.url}${path}`, reusable: true, ...extra });

  beforeAll(async () => {
    origin = await startFakeOrigin();
    seller = await newSeller();
  });
  afterAll(() => origin.close());

  it("creates a relay checkout from origin_url (fulfillment inferred) and never answers the one-off credential", async () => {
    const r = await call("POST", "/v1/checkouts", {
      key: seller.key,
      body: { title: "Echo", price_usd: "0.10", origin_url: `${origin.url}/echo`, origin_auth_type: "bearer", origin_auth_value: ORIGIN_SECRET },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      fulfillment: "relay",
      origin_url: `${origin.url}/echo`,
      origin_method: "GET",
      origin_auth_type: "bearer",
      origin_auth_value: null,
      origin_auth_stored: true,
      origin_auth_secret_id: null,
      payload: null,
    });
    const read = await call("GET", `/v1/checkouts/${r.body.id}`, { key: seller.key });
    expect(read.body).toMatchObject({ fulfillment: "relay", origin_url: `${origin.url}/echo`, origin_auth_stored: true });
    const list = await call("GET", "/v1/checkouts", { key: seller.key });
    expect(list.body.checkouts.find((c: { id: string }) => c.id === r.body.id)).toMatchObject({ fulfillment: "relay" });
    for (const text of [r.text, read.text, list.text]) expect(text).not.toContain(ORIGIN_SECRET);
  });

  it("refuses contradictory or incomplete relay fields with 422 naming every field", async () => {
    const cases: [Record<string, unknown>, string[]][] = [
      [{ origin_url: `${origin.url}/echo`, payload: { a: 1 } }, ["payload"]],
      [{ fulfillment: "inline", origin_url: `${origin.url}/echo` }, ["origin_url", "fulfillment"]],
      [{ fulfillment: "relay" }, ["origin_url"]],
      [{ origin_method: "POST", payload: "x" }, ["origin_method"]],
      [{ origin_url: `${origin.url}/echo`, origin_auth_value: "v" }, ["origin_auth_type"]],
      [{ origin_url: `${origin.url}/echo`, origin_auth_type: "bearer" }, ["origin_auth_value"]],
      [{ origin_url: `${origin.url}/echo`, origin_auth_type: "api_key", origin_auth_value: "v" }, ["origin_auth_header"]],
      [{ origin_url: `${origin.url}/echo`, origin_auth_secret_id: "okey_Nonexistent000000000000" }, ["origin_auth_secret_id"]],
      [{ origin_url: `${origin.url}/echo`, origin_auth_secret_id: "okey_Nonexistent000000000000", origin_auth_type: "bearer" }, ["origin_auth_type"]],
      [{ origin_url: "ftp://example.com/x" }, ["origin_url"]],
      [{ origin_url: "http://user:pw@example.com/x" }, ["origin_url"]],
      [{ origin_url: "http://169.254.169.254/latest/meta-data" }, ["origin_url"]],
      [{ fulfillment: "webhook", origin_url: `${origin.url}/echo` }, ["origin_url", "fulfillment"]],
      [{ fulfillment: "mcp" }, ["origin_url"]],
      [{ origin_url: `${origin.url}/echo`, mcp_tool: "forecast", fulfillment: "relay" }, ["mcp_tool", "fulfillment"]],
    ];
    for (const [body, fields] of cases) {
      const r = await call("POST", "/v1/checkouts", { key: seller.key, body: { title: "Bad relay", price_usd: "0.10", ...body } });
      expect([JSON.stringify(body), r.status, r.body.errors?.map((e: { field: string }) => e.field)]).toEqual([JSON.stringify(body), 422, fields]);
    }
  });

  it("rehearsal: passes the buyer's parameters and the credential to the origin, answers its goods with the receipt, and redelivers without calling it again", async () => {
    const c = await relay("/echo", { origin_auth_type: "bearer", origin_auth_value: ORIGIN_SECRET });
    const path = `/c/${c.id}/test?city=Paris&units=metric`;
    const payment = await signed(path);
    const before = origin.callsTo("/echo").length;
    const r = await pay(path, payment);
    expect(r.status).toBe(200);
    expect(r.body.fulfillment).toEqual({
      mode: "relay",
      origin_status: 200,
      content_type: "application/json",
      payload: { method: "GET", query: { city: "Paris", units: "metric" }, body: null, authorization: `Bearer ${ORIGIN_SECRET}`, x_api_key: null },
    });
    expect(r.body.receipt).toMatchObject({
      test_mode: true,
      delivery: { outcome: "delivered", status: 200, latency_ms: expect.any(Number), bytes: expect.any(Number) },
    });
    expect(r.headers.get("payment-response")).toBeTruthy();
    expect(r.text).not.toContain("PAYMENT-SIGNATURE");

    const again = await pay(path, payment);
    expect([again.status, again.body.redelivered, again.body.fulfillment.payload]).toEqual([200, true, r.body.fulfillment.payload]);
    expect(origin.callsTo("/echo").length).toBe(before + 1);
    const receipt = await call("GET", `/r/${r.body.receipt.id}`);
    expect(receipt.body.delivery).toEqual({
      outcome: "delivered",
      status: 200,
      latency_ms: r.body.receipt.delivery.latency_ms,
      bytes: r.body.receipt.delivery.bytes,
    });
  });

  it("prepare honours params: checked before anything is signed, carried on pay_url to the origin as GET's query would be", async () => {
    const c = await relay("/echo", { origin_method: "POST" });
    const params = { city: "Nice", body: JSON.stringify({ days: 3 }) };
    const prepared = await call("POST", `/c/${c.id}/test/prepare`, { body: { payer: buyer.address, params } });
    expect(prepared.status).toBe(200);
    expect(prepared.body.pay_url).toBe(`${baseUrl()}/c/${c.id}/test?${new URLSearchParams(params).toString()}`);
    expect(prepared.body.payload_stub.resource?.url ?? prepared.body.pay_url).toBe(prepared.body.pay_url);
    const t = prepared.body.typed_data;
    const stub = prepared.body.payload_stub;
    stub.payload.signature = await buyer.signTypedData({
      domain: t.domain,
      types: { TransferWithAuthorization: t.types.TransferWithAuthorization },
      primaryType: "TransferWithAuthorization",
      message: { ...t.message, value: BigInt(t.message.value), validAfter: BigInt(t.message.validAfter), validBefore: BigInt(t.message.validBefore) },
    });
    const paid = await call("GET", prepared.body.pay_url.slice(baseUrl().length), { headers: { "PAYMENT-SIGNATURE": encodeHeader(stub) } });
    expect(paid.status).toBe(200);
    expect(paid.body.fulfillment.payload).toMatchObject({ method: "POST", query: { city: "Nice" }, body: { days: 3 } });

    const refused = await call("POST", `/c/${c.id}/test/prepare`, { body: { payer: buyer.address, params: { body: "not json" } } });
    expect([refused.status, refused.body.errors]).toEqual([422, [{ field: "params.body", reason: "must be a JSON text" }]]);
  });

  it("sends the reserved body parameter as the request body of a POST origin", async () => {
    const c = await relay("/echo", { origin_method: "POST" });
    const path = `/c/${c.id}/test?q=1&body=${encodeURIComponent(JSON.stringify({ city: "Lyon" }))}`;
    const r = await pay(path, await signed(path));
    expect(r.status).toBe(200);
    expect(r.body.fulfillment.payload).toMatchObject({ method: "POST", query: { q: "1" }, body: { city: "Lyon" } });
    const bad = `/c/${c.id}/test?body=not-json`;
    const refused = await pay(bad, await signed(bad));
    expect([refused.status, refused.body.errors]).toEqual([422, [{ field: "params.body", reason: "must be a JSON text" }]]);
  });

  it("text and binary answers are the payload as text, or base64 with its encoding", async () => {
    const text = await relay("/text");
    const t = await pay(`/c/${text.id}/test`, await signed(`/c/${text.id}/test`));
    expect(t.body.fulfillment).toMatchObject({ content_type: "text/plain; charset=utf-8", payload: "sunny, 21 °C" });
    const binary = await relay("/binary");
    const b = await pay(`/c/${binary.id}/test`, await signed(`/c/${binary.id}/test`));
    expect(b.body.fulfillment).toMatchObject({ encoding: "base64", payload: Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString("base64") });
  });

  it.each([400, 404, 422])("charge table: origin %i is the buyer's request error, charged, answered with the origin's status and body", async (status) => {
    const c = await relay(`/status/${status}`);
    const path = `/c/${c.id}/test?q=x`;
    const r = await pay(path, await signed(path));
    expect(r.status).toBe(status);
    expect(r.body).toMatchObject({
      fulfillment: { mode: "relay", origin_status: status, payload: { error: `status ${status}`, query: { q: "x" } } },
      receipt: { test_mode: true, delivery: { outcome: "buyer_error", status } },
      fault: "buyer",
      help: {
        report: { url: `${baseUrl()}/v1/checkouts/${c.id}/reports`, method: "POST", body: { category: "not_delivered", receipt_id: r.body.receipt.id } },
      },
    });
    expect((await call("GET", `/r/${r.body.receipt.id}`)).status).toBe(200);
  });

  it.each([500, 503, 401, 403, 429])(
    "charge table: origin %i is the seller's failure, not charged: 502 upstream-failed, and the same payment can be presented again",
    async (status) => {
      const c = await relay(`/status/${status}`);
      const path = `/c/${c.id}/test`;
      const payment = await signed(path);
      const calls = origin.callsTo(`/status/${status}`).length;
      const r = await pay(path, payment);
      expect(r.status).toBe(502);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(r.body).toMatchObject({
        type: expect.stringMatching(/\/problems\/upstream-failed$/),
        fault: "seller",
        charged: false,
        origin_status: status,
        help: { retry_is_safe: true, report: { url: `${baseUrl()}/v1/checkouts/${c.id}/reports`, method: "POST" } },
      });
      expect(r.headers.get("payment-response")).toBeNull();
      // Nothing was recorded as sold: the same authorization is presented again, and the origin is asked again.
      const again = await pay(path, payment);
      expect(again.status).toBe(502);
      expect(origin.callsTo(`/status/${status}`).length).toBe(calls + 2);
    },
  );

  it("charge table: an origin that does not answer in time, or cannot be reached, is not charged", async () => {
    const slow = await relay("/slow/8000");
    // Signed valid for 28 s: after the 25 s settlement reserve the origin gets about 2 s (ADR 9).
    const r = await pay(`/c/${slow.id}/test`, await signed(`/c/${slow.id}/test`, 28));
    expect([r.status, r.body.fault, r.body.reason]).toEqual([502, "seller", "timeout"]);
    const gone = await startFakeOrigin();
    const goneUrl = gone.url;
    await gone.close();
    const down = await newCheckout(seller.key, { title: "Down", price_usd: "0.10", payload: undefined, origin_url: `${goneUrl}/echo` });
    const d = await pay(`/c/${down.id}/test`, await signed(`/c/${down.id}/test`));
    expect([d.status, d.body.fault, d.body.reason]).toEqual([502, "seller", "unreachable"]);
    const tooShort = await pay(`/c/${slow.id}/test`, await signed(`/c/${slow.id}/test`, 20));
    expect([tooShort.status, tooShort.body.reason]).toEqual([402, "invalid_exact_evm_payload_authorization_valid_before"]);
  });

  it("meters relay rehearsals by test_delivery_daily_cap: over the cap 429 with a live_url, nothing charged", async () => {
    const c = await relay("/echo", { test_delivery_daily_cap: 2 });
    const untilTomorrow = Math.ceil((Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now()) / 1000);
    for (const left of [1, 0]) {
      const ok = await pay(`/c/${c.id}/test`, await signed(`/c/${c.id}/test`));
      expect([ok.status, ok.headers.get("x-ratelimit-limit"), ok.headers.get("x-ratelimit-remaining")]).toEqual([200, "2", String(left)]);
      expect(Math.abs(Number(ok.headers.get("x-ratelimit-reset")) - untilTomorrow)).toBeLessThan(60);
    }
    const calls = origin.callsTo("/echo").length;
    const over = await pay(`/c/${c.id}/test`, await signed(`/c/${c.id}/test`));
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ reason: "test_delivery_daily_cap", live_url: `${baseUrl()}/c/${c.id}`, charged: false });
    expect(Math.abs(Number(over.headers.get("retry-after")) - untilTomorrow)).toBeLessThan(60);
    expect(origin.callsTo("/echo").length).toBe(calls);
    // The live face of an armed relay checkout is not metered, and inline rehearsals never are (rehearsal-payment.test.ts).
    expect((await call("POST", `/v1/checkouts/${c.id}/go-live`, { key: seller.key })).status).toBe(200);
  });

  it("uses a stored origin key's current value: a rotation applies from the next call", async () => {
    const key = await call("POST", "/v1/origin-keys", { key: seller.key, body: { auth_type: "api_key", header_name: "X-Api-Key", value: "first-value" } });
    const c = await relay("/echo", { origin_auth_secret_id: key.body.id });
    expect(c).toMatchObject({ origin_auth_secret_id: key.body.id, origin_auth_type: null, origin_auth_stored: false });
    const first = await pay(`/c/${c.id}/test`, await signed(`/c/${c.id}/test`));
    expect(first.body.fulfillment.payload.x_api_key).toBe("first-value");
    expect((await call("PATCH", `/v1/origin-keys/${key.body.id}`, { key: seller.key, body: { value: "second-value" } })).status).toBe(200);
    const second = await pay(`/c/${c.id}/test`, await signed(`/c/${c.id}/test`));
    expect(second.body.fulfillment.payload.x_api_key).toBe("second-value");
    const keys = await call("GET", "/v1/origin-keys", { key: seller.key });
    expect(keys.body.origin_keys.find((k: { id: string }) => k.id === key.body.id).checkouts_using).toBe(1);
  });

  it.each([
    ["bearer", { origin_auth_type: "bearer", origin_auth_value: "leak-bearer" }, "authorization", "Bearer leak-bearer"],
    [
      "basic",
      { origin_auth_type: "basic", origin_auth_value: "user:leak-basic" },
      "authorization",
      `Basic ${Buffer.from("user:leak-basic").toString("base64")}`,
    ],
    ["api_key", { origin_auth_type: "api_key", origin_auth_header: "X-Api-Key", origin_auth_value: "leak-api-key" }, "x-api-key", "leak-api-key"],
    ["custom", { origin_auth_type: "custom", origin_auth_header: "X-Seller-Token", origin_auth_value: "leak-custom" }, "x-seller-token", "leak-custom"],
    ["stored origin key", { stored: { auth_type: "api_key", header_name: "X-Stored-Key", value: "leak-stored" } }, "x-stored-key", "leak-stored"],
  ])(
    "an origin that redirects (302, 307) to a host the buyer names: that host never receives the seller's credential (%s)",
    async (_type, auth, header, value) => {
      const other = await startFakeOrigin();
      try {
        const { stored, ...oneOff } = auth as Record<string, unknown> & { stored?: Record<string, string> };
        const key = stored ? (await call("POST", "/v1/origin-keys", { key: seller.key, body: stored })).body.id : undefined;
        for (const status of [302, 307]) {
          const c = await relay(`/redirect/${status}`, key ? { origin_auth_secret_id: key } : oneOff);
          const target = `${other.url}/echo`;
          const r = await pay(`/c/${c.id}/test?to=${encodeURIComponent(target)}`, await signed(`/c/${c.id}/test`));
          expect(r.status).toBe(200);
          // The first hop carried the credential (it is the seller's origin); the host the buyer named got none of it.
          expect(origin.callsTo(`/redirect/${status}`).at(-1)!.headers[header]).toBe(value);
          const leaked = other.callsTo("/echo").at(-1)!;
          expect(leaked.headers[header]).toBeUndefined();
          expect(JSON.stringify(leaked.headers)).not.toContain(value.split(" ").at(-1)!);
          expect(r.body.fulfillment.payload).toMatchObject({ authorization: null, x_api_key: null });
        }
      } finally {
        await other.close();
      }
    },
  );

  describe("live face on the devchain", () => {
    let chain: DevchainWallets;
    beforeAll(async () => {
      chain = await devchainWallets(6);
    });

    it("the official client pays a relay checkout: the origin delivers, then money moves; a failing origin moves none", async () => {
      const liveBuyer = await chain.fundedBuyer(1_000_000n);
      const good = await relay("/echo", { test_mode: false });
      const client = new x402Client();
      registerExactEvmScheme(client, { signer: liveBuyer });
      const paidFetch = wrapFetchWithPayment(fetch, client);
      const res = await paidFetch(`${baseUrl()}/c/${good.id}?city=Oslo`, { headers: { accept: "application/json" } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { fulfillment: { payload: { query: unknown } }; receipt: Record<string, unknown> };
      expect(body.fulfillment.payload.query).toEqual({ city: "Oslo" });
      expect(body.receipt).toMatchObject({ test_mode: false, total: 110500, delivery: { outcome: "delivered", status: 200 } });
      expect(await chain.balance(liveBuyer.address)).toBe(1_000_000n - 110_500n);

      const failing = await relay("/status/503", { test_mode: false });
      const failed = await paidFetch(`${baseUrl()}/c/${failing.id}`, { headers: { accept: "application/json" } });
      expect(failed.status).toBe(502);
      expect(await chain.balance(liveBuyer.address)).toBe(1_000_000n - 110_500n);
    });
  });
});
