import { encodeHeader, signExactEvmPayment, type PaymentPayload, type PaymentRequirements } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { baseUrl, call, decoded, newCheckout, newSeller } from "../src/http";

const buyer = privateKeyToAccount(generatePrivateKey());

async function requirementsOf(path: string): Promise<{ accepts: PaymentRequirements[]; resource: { url: string } }> {
  const r = await call("GET", path);
  expect(r.status).toBe(402);
  return decoded(r.headers.get("payment-required"));
}

async function signedFor(path: string, mutate?: (p: PaymentPayload) => void) {
  const required = await requirementsOf(path);
  const payment = await signExactEvmPayment(buyer, required.accepts[0] as PaymentRequirements, { resourceUrl: required.resource.url });
  mutate?.(payment);
  return encodeHeader(payment);
}

describe("buyer faces and the rehearsal payment", () => {
  let key: string;
  let checkout: { id: string; url: string; test_url: string };
  let seller: string;

  beforeAll(async () => {
    const s = await newSeller();
    key = s.key;
    seller = s.wallet.address;
    checkout = await newCheckout(key, {
      title: "Weather for Paris",
      price_usd: "0.10",
      payload: { temp_c: 21 },
      freshness: "hourly",
      example_output: { temp_c: 20 },
    });
  });

  it("answers 402 with a standard-base64 PAYMENT-REQUIRED header (x402 v2) and the body with accepts, offer and endpoint", async () => {
    const r = await call("GET", `/c/${checkout.id}`);
    expect(r.status).toBe(402);
    const header = r.headers.get("payment-required") as string;
    expect(header).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    const required = decoded(header);
    expect(required).toMatchObject({ x402Version: 2, resource: { url: `${baseUrl()}/c/${checkout.id}` } });
    expect(required.accepts).toEqual([
      {
        scheme: "exact",
        network: "eip155:84532",
        asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        amount: "110500",
        payTo: seller,
        maxTimeoutSeconds: 300,
        extra: { name: "USDC rehearsal - no funds move", version: "2", checkoutId: checkout.id, rehearsal: true },
        resource: `${baseUrl()}/c/${checkout.id}`,
      },
    ]);
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    expect(r.body.accepts).toEqual(required.accepts);
    expect(r.body.offer).toMatchObject({
      title: "Weather for Paris",
      price_usd: "0.100000",
      total_usd: "0.110500",
      freshness: "hourly",
      example_output: { temp_c: 20 },
    });
    expect(r.body.endpoint.rehearsal.test_url).toBe(`${baseUrl()}/c/${checkout.id}/test`);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("access-control-expose-headers")).toContain("PAYMENT-REQUIRED");
  });

  it("a repeated unpaid request (answered from the quote cache) is the same answer: status, body and headers", async () => {
    for (const path of [`/c/${checkout.id}`, `/c/${checkout.id}/test`, `/c/${checkout.id}?x402_version=1`]) {
      const [first, second] = [await call("GET", path), await call("GET", path)];
      expect(second.status).toBe(402);
      expect(second.text).toBe(first.text);
      const stable = (r: typeof first) =>
        [...r.headers.entries()].filter(([name]) => !["date", "x-request-id", "etag", "keep-alive", "connection"].includes(name)).sort();
      expect(stable(second)).toEqual(stable(first));
      expect(second.headers.get("x-request-id")).toMatch(/^.{8,}$/);
    }
  });

  it("the test face names /test in resource and says it settles without real money", async () => {
    const r = await call("GET", `/c/${checkout.id}/test`);
    expect(r.status).toBe(402);
    expect(decoded(r.headers.get("payment-required")).resource.url).toBe(`${baseUrl()}/c/${checkout.id}/test`);
    expect(r.body.accepts.every((a: PaymentRequirements) => a.network === "eip155:84532" && a.resource === `${baseUrl()}/c/${checkout.id}/test`)).toBe(true);
    expect(r.body.endpoint.rehearsal.note).toMatch(/without real money/);
    expect(r.body.endpoint.rehearsal.live_status).toMatch(/not gone live/);
  });

  it("serves a pay page to browsers", async () => {
    const r = await call("GET", `/c/${checkout.id}`, { headers: { accept: "text/html" } });
    expect(r.status).toBe(402);
    expect(r.headers.get("content-type")).toMatch(/text\/html/);
    expect(r.text).toContain("Weather for Paris");
  });

  it("keeps the faces' namespaces: a non-chk id or an unknown chk id is 404", async () => {
    for (const path of [
      `/c/esc_${checkout.id.slice(4)}`,
      `/c/cnt_${checkout.id.slice(4)}/test`,
      `/e/${checkout.id}`,
      `/x/${checkout.id}`,
      "/c/chk_AAAAAAAAAAAAAAAAAAAAAAAA",
      "/c/whatever",
    ]) {
      const r = await call("GET", path);
      expect(r.status).toBe(404);
      expect(r.body.type).toMatch(/\/problems\/not-found$/);
    }
  });

  it("pays the rehearsal face: goods and receipt in one 200 with PAYMENT-RESPONSE; the same payment again redelivers", async () => {
    const header = await signedFor(`/c/${checkout.id}/test`);
    const paid = await call("GET", `/c/${checkout.id}/test`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(paid.status).toBe(200);
    expect(paid.body.fulfillment).toEqual({ mode: "inline", payload: { temp_c: 21 } });
    const receipt = paid.body.receipt;
    expect(receipt).toMatchObject({
      id: expect.stringMatching(/^pay_/),
      checkout_id: checkout.id,
      network: "eip155:84532",
      amount_usd: "0.100000",
      provider_amount: 100000,
      platform_amount: null,
      fee_amount: 10500,
      total: 110500,
      payer: buyer.address,
      subject: expect.stringMatching(/^sub_/),
      pay_to: seller,
      tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      test_mode: true,
      settled_at: expect.any(String),
    });
    const settle = decoded(paid.headers.get("payment-response"));
    expect(settle).toEqual({ success: true, transaction: receipt.tx_hash, network: "eip155:84532", payer: buyer.address });

    const again = await call("GET", `/c/${checkout.id}/test`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(again.status).toBe(200);
    expect(again.body.receipt.id).toBe(receipt.id);
    expect(again.body.redelivered).toBe(true);

    const r = await call("GET", `/r/${receipt.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ...receipt, receipt_url: `${baseUrl()}/r/${receipt.id}` });
    expect(r.body.split).toEqual({ seller: 100000, platform: null, protocol_fee: 10500, total: 110500, currency: "USDC", decimals: 6 });

    const after = await call("GET", `/v1/checkouts/${checkout.id}`, { key });
    expect(after.body.status).toBe("open");
  });

  it("a rehearsal payment that carried a handoff nonce is found at /c/{id}/handoff/{nonce}, marked test_mode", async () => {
    const nonce = "rehearsal_handoff-0123456789";
    expect((await call("GET", `/c/${checkout.id}/handoff/${nonce}`)).status).toBe(404);
    const paid = await call("GET", `/c/${checkout.id}/test?h=${nonce}`, { headers: { "PAYMENT-SIGNATURE": await signedFor(`/c/${checkout.id}/test`) } });
    expect(paid.status).toBe(200);
    const found = await call("GET", `/c/${checkout.id}/handoff/${nonce}`);
    expect(found.body).toEqual({ payment_id: paid.body.receipt.id, receipt_url: paid.body.receipt_url, escrow_state: null, test_mode: true });
  });

  it("accepts the X-PAYMENT header and answers X-PAYMENT-RESPONSE too", async () => {
    const header = await signedFor(`/c/${checkout.id}/test`);
    const paid = await call("GET", `/c/${checkout.id}/test`, { headers: { "X-PAYMENT": header } });
    expect(paid.status).toBe(200);
    expect(decoded(paid.headers.get("x-payment-response")).success).toBe(true);
  });

  it("settles concurrent presentations of one payment once", async () => {
    const header = await signedFor(`/c/${checkout.id}/test`);
    const results = await Promise.all(Array.from({ length: 10 }, () => call("GET", `/c/${checkout.id}/test`, { headers: { "PAYMENT-SIGNATURE": header } })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.receipt.id)).size).toBe(1);
    expect(results.filter((r) => r.body.redelivered === false)).toHaveLength(1);
  });

  it("sells a checkout as it is now, not as it was when payments and the gateway kept it (ADR 14): patched, then voided", async () => {
    const c = await newCheckout(key, { title: "Tides", payload: { tide_m: 1.2 } });
    const pay = async () => call("GET", `/c/${c.id}/test`, { headers: { "PAYMENT-SIGNATURE": await signedFor(`/c/${c.id}/test`) } });
    // Two sales: the second is sold from what the first left kept.
    for (const paid of [await pay(), await pay()]) {
      expect([paid.status, paid.body.receipt.title, paid.body.fulfillment.payload]).toEqual([200, "Tides", { tide_m: 1.2 }]);
    }
    expect((await call("PATCH", `/v1/checkouts/${c.id}`, { key, body: { title: "Tides at Brest" } })).status).toBe(200);
    const patched = await pay();
    expect([patched.status, patched.body.receipt.title, patched.body.fulfillment.payload]).toEqual([200, "Tides at Brest", { tide_m: 1.2 }]);
    const header = await signedFor(`/c/${c.id}/test`);
    expect((await call("DELETE", `/v1/checkouts/${c.id}`, { key })).status).toBe(200);
    const voided = await call("GET", `/c/${c.id}/test`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(voided.status).toBe(410);
    expect(voided.body.receipt).toBeUndefined();
  });

  it("the unarmed live face rehearses too (simulated, test_mode receipt)", async () => {
    const header = await signedFor(`/c/${checkout.id}`);
    const paid = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(paid.status).toBe(200);
    expect(paid.body.receipt.test_mode).toBe(true);
  });

  describe("bad payments are 402 problems with fresh requirements and no receipt", () => {
    const cases: [string, (p: PaymentPayload) => void, string][] = [
      [
        "wrong signature",
        (p) => (p.payload.signature = `${p.payload.signature.slice(0, 10)}${p.payload.signature[10] === "a" ? "b" : "a"}${p.payload.signature.slice(11)}`),
        "invalid_exact_evm_signature",
      ],
      ["wrong amount", (p) => (p.payload.authorization.value = "1"), "invalid_exact_evm_payload_authorization_value_mismatch"],
      ["expired authorization", (p) => (p.payload.authorization.validBefore = "1000"), "invalid_exact_evm_payload_authorization_valid_before"],
      ["other recipient", (p) => (p.payload.authorization.to = "0x3333333333333333333333333333333333333333"), "invalid_exact_evm_recipient_mismatch"],
      ["requirement not issued", (p) => (p.accepted = { ...(p.accepted as PaymentRequirements), amount: "999" }), "no_matching_requirements"],
    ];
    it.each(cases)("%s", async (_name, mutate, reason) => {
      const header = await signedFor(`/c/${checkout.id}/test`, mutate);
      const r = await call("GET", `/c/${checkout.id}/test`, { headers: { "PAYMENT-SIGNATURE": header } });
      expect(r.status).toBe(402);
      expect(r.headers.get("content-type")).toMatch(/application\/problem\+json/);
      expect(r.body).toMatchObject({
        type: expect.stringMatching(/\/problems\/payment-required$/),
        status: 402,
        reason,
        help: { prepare: expect.stringContaining("/prepare") },
      });
      expect(decoded(r.headers.get("payment-required")).error).toBe(reason);
      expect(r.headers.get("payment-response")).toBeNull();
    });

    it.each([
      ["not base64", "%%%"],
      ["base64url", Buffer.from('{"x402Version":2,"a":"??>"}').toString("base64url")],
      ["not JSON", Buffer.from("hello").toString("base64")],
      ["wrong version", encodeHeader({ x402Version: 7 })],
      ["oversized", Buffer.from(JSON.stringify({ x: "y".repeat(12_000) })).toString("base64")],
    ])("malformed header: %s", async (_name, header) => {
      const r = await call("GET", `/c/${checkout.id}/test`, { headers: { "PAYMENT-SIGNATURE": header } });
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    });
  });

  it("a malformed header is refused the same at the edge (requirements cached: status, body, headers) as by payments (cache expired)", async () => {
    const face = `/c/${checkout.id}/test`;
    const header = Buffer.from('{"x402Version":7}').toString("base64");
    await call("GET", face); // the requirements are now at hand in the gateway
    const atEdge = await call("GET", face, { headers: { "PAYMENT-SIGNATURE": header } });
    await new Promise((r) => setTimeout(r, 1_100)); // past the quote cache's second
    const byPayments = await call("GET", face, { headers: { "PAYMENT-SIGNATURE": header } });
    for (const r of [atEdge, byPayments]) {
      expect(r.status).toBe(402);
      expect(r.body).toMatchObject({ reason: "invalid_x402_version", help: { prepare: expect.stringContaining("/prepare") } });
    }
    const { instance: _a, ...edgeDoc } = atEdge.body;
    const { instance: _b, ...paymentsDoc } = byPayments.body;
    expect(edgeDoc).toEqual(paymentsDoc);
    expect(decoded(atEdge.headers.get("payment-required"))).toEqual(decoded(byPayments.headers.get("payment-required")));
    const stable = (r: typeof atEdge) =>
      [...r.headers.entries()].filter(([name]) => !["date", "x-request-id", "etag", "keep-alive", "connection", "content-length"].includes(name)).sort();
    expect(stable(atEdge)).toEqual(stable(byPayments));
  });

  it("an armed live face refuses a rehearsal payment", async () => {
    const c = await newCheckout(key);
    await call("POST", `/v1/checkouts/${c.id}/go-live`, { key });
    const header = await signedFor(`/c/${c.id}/test`);
    const r = await call("GET", `/c/${c.id}`, { headers: { "PAYMENT-SIGNATURE": header } });
    expect(r.status).toBe(402);
    expect(r.body.reason).toBe("rehearsal_payment_on_live_face");
    const live = await call("GET", `/c/${c.id}`);
    // Locally the live face settles on the devchain as eip155:84532 (never as Base mainnet).
    expect(live.body.accepts.map((a: PaymentRequirements) => a.network)).toEqual(["eip155:84532"]);
    expect(live.body.accepts[0].extra).toEqual({ name: "USDC", version: "2", checkoutId: c.id });
    expect(live.body.accepts[0].payTo).not.toBe(seller);
    const test = await call("GET", `/c/${c.id}/test`);
    expect(test.body.endpoint.rehearsal.live_url).toBe(c.url);
  });

  it("prepare returns EIP-712 typed data and a payload stub that pay once signed", async () => {
    const prepared = await call("POST", `/c/${checkout.id}/test/prepare`, { body: { payer: buyer.address } });
    expect(prepared.status).toBe(200);
    expect(prepared.body).toMatchObject({
      network: "eip155:84532",
      typed_data: { primaryType: "TransferWithAuthorization", domain: { name: "USDC rehearsal - no funds move", version: "2", chainId: 84532 } },
    });
    const t = prepared.body.typed_data;
    const signature = await buyer.signTypedData({
      domain: t.domain,
      types: { TransferWithAuthorization: t.types.TransferWithAuthorization },
      primaryType: "TransferWithAuthorization",
      message: { ...t.message, value: BigInt(t.message.value), validAfter: BigInt(t.message.validAfter), validBefore: BigInt(t.message.validBefore) },
    });
    const stub = prepared.body.payload_stub;
    stub.payload.signature = signature;
    const paid = await call("GET", `/c/${checkout.id}/test`, { headers: { "PAYMENT-SIGNATURE": encodeHeader(stub) } });
    expect(paid.status).toBe(200);
    const bad = await call("POST", `/c/${checkout.id}/prepare`, { body: {} });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([{ field: "payer", reason: "is required" }]);
  });

  it("serves the receipt as HTML, as a self-contained download, and by transaction hash", async () => {
    const paid = await call("GET", `/c/${checkout.id}/test`, { headers: { "PAYMENT-SIGNATURE": await signedFor(`/c/${checkout.id}/test`) } });
    const receipt = paid.body.receipt;
    const html = await call("GET", `/r/${receipt.id}`, { headers: { accept: "text/html" } });
    expect(html.status).toBe(200);
    expect(html.headers.get("content-type")).toMatch(/text\/html/);
    expect(html.text).toContain(receipt.id);
    expect(html.text).toContain(receipt.tx_hash);
    expect(html.text).toMatch(/without real money/);
    expect(html.text).not.toMatch(/<script/i);
    const file = await call("GET", `/r/${receipt.id}/download`);
    expect(file.headers.get("content-disposition")).toBe(`attachment; filename="receipt-${receipt.id}.html"`);
    expect(file.text).toContain("0.110500 USDC");
    const byTx = await fetch(`${baseUrl()}/r/by-tx/${receipt.tx_hash}`, { redirect: "manual" });
    expect(byTx.status).toBe(303);
    expect(byTx.headers.get("location")).toBe(`${baseUrl()}/r/${receipt.id}`);
    expect((await call("GET", `/r/by-tx/0x${"0".repeat(64)}`)).status).toBe(404);
    expect((await call("GET", "/r/by-tx/nope")).status).toBe(404);
  });

  it("an unknown receipt is 404", async () => {
    expect((await call("GET", "/r/pay_AAAAAAAAAAAAAAAAAAAAAAAA")).status).toBe(404);
    expect((await call("GET", "/r/chk_AAAAAAAAAAAAAAAAAAAAAAAA")).status).toBe(404);
  });

  it("pays by POST /c/{id}/test/pay with the same header: goods and receipt; presented again, redelivered", async () => {
    const header = await signedFor(`/c/${checkout.id}/test`);
    const paid = await call("POST", `/c/${checkout.id}/test/pay`, { headers: { "payment-signature": header } });
    expect(paid.status).toBe(200);
    expect(decoded(paid.headers.get("payment-response"))).toMatchObject({ success: true, network: "eip155:84532" });
    expect(paid.body).toMatchObject({ fulfillment: { payload: { temp_c: 21 } }, receipt: { checkout_id: checkout.id, test_mode: true }, redelivered: false });
    const again = await call("POST", `/c/${checkout.id}/test/pay`, { headers: { "payment-signature": header }, body: {} });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ receipt: { id: paid.body.receipt.id }, redelivered: true });
    const unpaid = await call("POST", `/c/${checkout.id}/pay`);
    expect(unpaid.status).toBe(402);
    expect(decoded(unpaid.headers.get("payment-required")).accepts).toHaveLength(1);
  });
});
