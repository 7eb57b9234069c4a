import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogV1, paymentsV1, settleResponseMessage, identityV1 } from "@c402/contracts";
import { paymentRefused, ProblemError } from "@c402/problems";
import {
  BASE_URL,
  bodyOf,
  CHECKOUT_ID,
  checkout,
  decodeBase64Json,
  paymentHeader,
  PAYMENT_ID,
  quote,
  receipt,
  recorded,
  REQUIREMENT,
  servers,
  SITE_URL,
  TX_HASH,
} from "../support/fake-gateway";

/** GET /c/{id} and /c/{id}/test: the unpaid 402 and the paid request (routes/faces.ts). */

const serve = servers();
const FACE_URL = `${BASE_URL}/c/${CHECKOUT_ID}`;
const SETTLED = { success: true, transaction: TX_HASH, network: "eip155:84532", payer: "0x2222222222222222222222222222222222222222" };
/** The goods of the checkout payments read for the sale (SubmitPaymentResponse.checkout): not the quote's ({temp_c: 21}). */
const SOLD_GOODS = { temp_c: 22, read: "for the sale" };

type Submit = (req: MessageInitShape<typeof paymentsV1.SubmitPaymentRequestSchema>) => Promise<paymentsV1.SubmitPaymentResponse>;
type Quote = () => Promise<paymentsV1.QuotePaymentResponse>;

/**
 * Payments for one checkout, recording every request. Catalog answers too, with a checkout of its own (another
 * title, other goods), so that a face asking catalog would show in the calls and in its answer: the faces ask
 * payments only (the quote and the sale carry the checkout).
 */
function faceFakes(
  opts: { checkout?: MessageInitShape<typeof catalogV1.CheckoutSchema>; settlement?: paymentsV1.SettlementKind; quote?: Quote; submit?: Submit } = {},
) {
  return recorded({
    // The seller allowlisted no embed origin: nothing may frame its pages.
    identity: { getEmbedSettings: async () => create(identityV1.GetEmbedSettingsResponseSchema, { embedOrigins: [] }) },
    catalog: {
      getCheckout: async () =>
        create(catalogV1.GetCheckoutResponseSchema, { checkout: checkout({ title: "Catalog's own copy", payloadJson: JSON.stringify({ from: "catalog" }) }) }),
    },
    payments: {
      quotePayment: opts.quote ?? (async () => quote(opts.settlement, opts.checkout)),
      submitPayment: async (req) => {
        if (!opts.submit) throw new Error("no payment expected");
        return opts.submit(req);
      },
    },
  });
}

const settled =
  (init: Partial<Omit<paymentsV1.SubmitPaymentResponse, "$typeName" | "$unknown">> = {}): Submit =>
  async () =>
    create(paymentsV1.SubmitPaymentResponseSchema, {
      receipt: receipt(),
      redelivered: false,
      settleResponse: settleResponseMessage(SETTLED),
      checkout: checkout({ payloadJson: JSON.stringify(SOLD_GOODS) }),
      status: paymentsV1.PaymentStatus.SETTLED,
      paymentId: PAYMENT_ID,
      txHash: TX_HASH,
      ...init,
    });

const json = { accept: "application/json" };

describe("the unpaid 402 of a face", () => {
  it("answers the test face with x402 v2 requirements in PAYMENT-REQUIRED and the body, plus the offer and endpoint", async () => {
    const { fakes, of, called } = faceFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}/test`, { headers: json });
    expect(res.status).toBe(402);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")).toContain("PAYMENT-REQUIRED");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const required = { ...REQUIREMENT, resource: `${FACE_URL}/test` };
    expect(decodeBase64Json(res.headers.get("payment-required"))).toEqual({
      x402Version: 2,
      error: "Payment required",
      resource: { url: `${FACE_URL}/test`, description: "Weather for Paris", mimeType: "application/json" },
      accepts: [required],
    });
    const body = await bodyOf(res);
    expect(body).toMatchObject({
      x402Version: 2,
      accepts: [required],
      offer: {
        title: "Weather for Paris",
        description: "Today's temperature",
        price_usd: "0.100000",
        fee_usd: "0.010500",
        total_usd: "0.110500",
        freshness: "hourly",
      },
      endpoint: {
        url: `${FACE_URL}/test`,
        method: "GET",
        settlement: "simulated",
        pay: { legacy_v1_url: `${FACE_URL}/test?x402_version=1`, prepare: `${FACE_URL}/test/prepare` },
        rehearsal: { test_mode: true, live_url: null },
      },
    });
    expect(of("quotePayment")).toEqual([{ checkoutId: CHECKOUT_ID, face: paymentsV1.Face.TEST }]);
    // The offer is the checkout the quote carries: catalog is not asked.
    expect(called()).toEqual(["payments.quotePayment"]);
  });

  it("answers the live face of an armed checkout as on-chain, and of an unarmed one as a rehearsal", async () => {
    const armed = faceFakes({ checkout: { armed: true }, settlement: paymentsV1.SettlementKind.ONCHAIN });
    const live = await bodyOf(await fetch(`${(await serve.app(armed.fakes)).url}/c/${CHECKOUT_ID}`, { headers: json }));
    expect(live.endpoint).toMatchObject({ url: FACE_URL, settlement: "onchain", rehearsal: { test_url: `${FACE_URL}/test` } });
    expect(live.endpoint.note).toBeUndefined();
    expect(armed.of("quotePayment")).toEqual([{ checkoutId: CHECKOUT_ID, face: paymentsV1.Face.LIVE }]);
    expect(armed.called()).toEqual(["payments.quotePayment"]);

    const unarmed = faceFakes();
    const rehearsing = await bodyOf(await fetch(`${(await serve.app(unarmed.fakes)).url}/c/${CHECKOUT_ID}`, { headers: json }));
    expect(rehearsing.endpoint.settlement).toBe("simulated");
    expect(rehearsing.endpoint.note).toMatch(/has not gone live yet/);
    expect(unarmed.called()).toEqual(["payments.quotePayment"]);
  });

  it("answers the v1 body on ?x402_version=1 (header still v2) and refuses any other version with 422", async () => {
    const { fakes, called } = faceFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}?x402_version=1`, { headers: json });
    expect(res.status).toBe(402);
    expect(decodeBase64Json(res.headers.get("payment-required"))).toMatchObject({ x402Version: 2 });
    const body = await bodyOf(res);
    expect(body).toMatchObject({
      x402Version: 1,
      accepts: [{ scheme: "exact", network: "base-sepolia", maxAmountRequired: "110500", resource: `${FACE_URL}?x402_version=1`, payTo: REQUIREMENT.payTo }],
      offer: { total_usd: "0.110500" },
    });
    const wrong = await fetch(`${url}/c/${CHECKOUT_ID}?x402_version=3`, { headers: json });
    expect(wrong.status).toBe(422);
    expect((await bodyOf(wrong)).errors).toEqual([{ field: "x402_version", reason: "must be 1 or 2" }]);
    expect(called()).toEqual(["payments.quotePayment"]);
  });

  it("shows a browser the pay page, still with PAYMENT-REQUIRED", async () => {
    const { fakes, called } = faceFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}/test`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(402);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("payment-required")).not.toBeNull();
    const page = await res.text();
    expect(page).toContain("<title>Weather for Paris</title>");
    expect(page).toContain("<strong>0.110500 USDC</strong>");
    expect(page).toContain("rehearsal: settles without real money");
    // The page asks whose sites may frame it: none here, so nothing may.
    expect(called()).toEqual(["payments.quotePayment", "identity.getEmbedSettings"]);
    expect([res.headers.get("content-security-policy"), res.headers.get("x-frame-options")]).toEqual([
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      "DENY",
    ]);
  });

  it("reuses the answer for the next request instead of asking payments again", async () => {
    const { fakes, called } = faceFakes();
    const { url } = await serve.app(fakes);
    const first = await (await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: json })).text();
    const second = await (await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: json })).text();
    expect(second).toBe(first);
    expect(called()).toEqual(["payments.quotePayment"]);
  });

  it("is a server error when payments quotes without the checkout, never a read of catalog", async () => {
    const { fakes, called } = faceFakes({ quote: async () => create(paymentsV1.QuotePaymentResponseSchema, { ...quote(), checkout: undefined }) });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: json });
    expect(res.status).toBe(500);
    expect(res.headers.get("payment-required")).toBeNull();
    expect(called()).toEqual(["payments.quotePayment"]);
  });

  it("knows only checkout ids under /c/, and answers CORS preflights", async () => {
    const { fakes, calls } = faceFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${PAYMENT_ID}`, { headers: json });
    expect(res.status).toBe(404);
    expect((await bodyOf(res)).type).toBe(`${SITE_URL}/problems/not-found`);
    expect(calls).toHaveLength(0);
    const preflight = await fetch(`${url}/c/${CHECKOUT_ID}/test`, { method: "OPTIONS" });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("GET, POST, OPTIONS");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("PAYMENT-SIGNATURE");
  });
});

describe("a paid request", () => {
  it("is judged by payments and answered 200 with the goods, the receipt and PAYMENT-RESPONSE", async () => {
    const { fakes, of, called } = faceFakes({ submit: settled() });
    const { url } = await serve.app(fakes);
    const header = paymentHeader();
    const res = await fetch(`${url}/c/${CHECKOUT_ID}/test?h=handoff_nonce_0123456789`, { headers: { ...json, "payment-signature": header } });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(decodeBase64Json(res.headers.get("payment-response"))).toEqual(SETTLED);
    expect(res.headers.get("x-payment-response")).toBeNull();
    expect(await bodyOf(res)).toMatchObject({
      // The goods of the checkout payments answered with the sale.
      fulfillment: { mode: "inline", payload: SOLD_GOODS },
      receipt: { id: PAYMENT_ID, object: "receipt", checkout_id: CHECKOUT_ID, total: 110500, test_mode: true, tx_hash: TX_HASH },
      receipt_url: `${BASE_URL}/r/${PAYMENT_ID}`,
      redelivered: false,
      test_mode: true,
    });
    expect(of("submitPayment")).toEqual([
      { checkoutId: CHECKOUT_ID, face: paymentsV1.Face.TEST, paymentHeader: header, handoffId: "handoff_nonce_0123456789", params: {} },
    ]);
    // Neither a quote nor catalog: the sale's answer carries the goods.
    expect(called()).toEqual(["payments.submitPayment"]);
  });

  it("delivers the goods of the sale's checkout, not of the cached quote's", async () => {
    const { fakes, called } = faceFakes({
      checkout: { reusable: true },
      submit: settled({ checkout: checkout({ reusable: true, payloadJson: JSON.stringify(SOLD_GOODS) }) }),
    });
    const { url } = await serve.app(fakes);
    expect((await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: json })).status).toBe(402);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { ...json, "payment-signature": paymentHeader() } });
    expect(res.status).toBe(200);
    expect((await bodyOf(res)).fulfillment).toEqual({ mode: "inline", payload: SOLD_GOODS });
    expect(called()).toEqual(["payments.quotePayment", "payments.submitPayment"]);
  });

  it("redelivers a sold-out single-shot's goods from payments' answer, with no quote to be had and without catalog", async () => {
    const { fakes, called } = faceFakes({
      quote: async () => {
        throw new ProblemError("gone", "This checkout has been paid.");
      },
      submit: settled({ redelivered: true }),
    });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { ...json, "payment-signature": paymentHeader() } });
    expect(res.status).toBe(200);
    expect(decodeBase64Json(res.headers.get("payment-response"))).toEqual(SETTLED);
    expect(await bodyOf(res)).toMatchObject({ fulfillment: { mode: "inline", payload: SOLD_GOODS }, receipt: { id: PAYMENT_ID }, redelivered: true });
    expect(called()).toEqual(["payments.submitPayment"]);
  });

  it("is a server error when payments settles without the checkout, never a read of catalog", async () => {
    const { fakes, called } = faceFakes({ submit: settled({ checkout: undefined }) });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { ...json, "payment-signature": paymentHeader() } });
    expect(res.status).toBe(500);
    expect(JSON.stringify(await bodyOf(res))).not.toContain("catalog");
    expect(called()).toEqual(["payments.submitPayment"]);
  });

  it("answers a legacy X-PAYMENT with X-PAYMENT-RESPONSE too", async () => {
    const { fakes, of, called } = faceFakes({ submit: settled() });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { ...json, "x-payment": paymentHeader() } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-payment-response")).toBe(res.headers.get("payment-response"));
    expect(of("submitPayment")).toEqual([expect.objectContaining({ face: paymentsV1.Face.LIVE })]);
    expect(of("submitPayment")[0]).not.toHaveProperty("handoffId");
    expect(called()).toEqual(["payments.submitPayment"]);
  });

  it("ends a single-shot checkout's cached 402 with its sale, and keeps a reusable one's (as the sale's checkout says)", async () => {
    // [the quote's checkout reusable, the sale's checkout reusable, quotes after the sale]: the sale's checkout decides.
    for (const [quoted, sold, quotesAfter] of [
      [false, false, 2],
      [true, true, 1],
      [true, false, 2],
      [false, true, 1],
    ] as const) {
      const { fakes, of, called } = faceFakes({ checkout: { reusable: quoted }, submit: settled({ checkout: checkout({ reusable: sold }) }) });
      const { url } = await serve.app(fakes);
      expect((await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: json })).status).toBe(402);
      expect((await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { "payment-signature": paymentHeader() } })).status).toBe(200);
      expect((await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: json })).status).toBe(402);
      expect({ quoted, sold, quotes: of("quotePayment") }).toEqual({
        quoted,
        sold,
        quotes: Array(quotesAfter).fill({ checkoutId: CHECKOUT_ID, face: paymentsV1.Face.LIVE }),
      });
      expect(called().every((c) => c.startsWith("payments."))).toBe(true);
    }
  });

  it("answers 202 pending with the receipt URL to poll when the settlement is not confirmed yet", async () => {
    // Pending: no receipt, and no goods yet (payments need not send the checkout).
    const { fakes, called } = faceFakes({ submit: settled({ receipt: undefined, checkout: undefined, status: paymentsV1.PaymentStatus.PENDING }) });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { "payment-signature": paymentHeader() } });
    expect(res.status).toBe(202);
    expect(decodeBase64Json(res.headers.get("payment-response"))).toEqual(SETTLED);
    expect(await bodyOf(res)).toMatchObject({
      status: "pending",
      payment_id: PAYMENT_ID,
      tx_hash: TX_HASH,
      receipt_url: `${BASE_URL}/r/${PAYMENT_ID}`,
      poll: `${BASE_URL}/r/${PAYMENT_ID}`,
    });
    expect(called()).toEqual(["payments.submitPayment"]);
  });

  it("refused by payments is a 402 problem with fresh requirements naming the reason", async () => {
    const { fakes, called } = faceFakes({
      submit: async () => {
        throw paymentRefused("invalid_exact_evm_payload_signature", "The signature does not match the authorization.");
      },
    });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}/test`, { headers: { "payment-signature": paymentHeader() } });
    expect(res.status).toBe(402);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(decodeBase64Json(res.headers.get("payment-required"))).toMatchObject({ x402Version: 2, error: "invalid_exact_evm_payload_signature" });
    expect(await bodyOf(res)).toMatchObject({
      type: `${SITE_URL}/problems/payment-required`,
      status: 402,
      reason: "invalid_exact_evm_payload_signature",
      detail: { message: "The signature does not match the authorization." },
      help: { prepare: `POST ${FACE_URL}/test/prepare with {"payer": "<address>"} returns the typed data to sign.` },
      accepts: [{ ...REQUIREMENT, resource: `${FACE_URL}/test` }],
    });
    // The fresh requirements are the face's quote: payments only.
    expect(called()).toEqual(["payments.submitPayment", "payments.quotePayment"]);
  });

  it("refused after a failed settlement carries the failure SettleResponse in PAYMENT-RESPONSE (and X-PAYMENT-RESPONSE for X-PAYMENT)", async () => {
    const { fakes, called } = faceFakes({
      submit: async () => {
        throw new ProblemError("payment-required", {
          message: "The transfer reverted.",
          extensions: { reason: "transaction_failed", settlement: { transaction: TX_HASH, network: "eip155:84532" } },
        });
      },
    });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { "x-payment": paymentHeader() } });
    expect(res.status).toBe(402);
    const failure = {
      success: false,
      errorReason: "transaction_failed",
      errorMessage: "The transfer reverted.",
      transaction: TX_HASH,
      network: "eip155:84532",
    };
    expect(decodeBase64Json(res.headers.get("payment-response"))).toEqual(failure);
    expect(decodeBase64Json(res.headers.get("x-payment-response"))).toEqual(failure);
    expect(called()).toEqual(["payments.submitPayment", "payments.quotePayment"]);
  });

  it("passes any other problem of payments through with its own status", async () => {
    const { fakes, called } = faceFakes({
      submit: async () => {
        throw new ProblemError("gone", "This checkout has expired.");
      },
    });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { "payment-signature": paymentHeader() } });
    expect(res.status).toBe(410);
    expect(await bodyOf(res)).toMatchObject({ type: `${SITE_URL}/problems/gone`, detail: { message: "This checkout has expired." } });
    expect(called()).toEqual(["payments.submitPayment"]);
  });
});

describe("the POST twin (/pay)", () => {
  it.each([
    ["live", `/c/${CHECKOUT_ID}/pay`, paymentsV1.Face.LIVE],
    ["test", `/c/${CHECKOUT_ID}/test/pay`, paymentsV1.Face.TEST],
  ])("pays the %s face as GET with the header does: 200 with the goods, the receipt and PAYMENT-RESPONSE", async (_face, path, face) => {
    const { fakes, of, called } = faceFakes({ submit: settled() });
    const { url } = await serve.app(fakes);
    const header = paymentHeader();
    const res = await fetch(`${url}${path}?h=handoff_nonce_0123456789`, { method: "POST", headers: { ...json, "x-payment": header } });
    expect(res.status).toBe(200);
    expect(decodeBase64Json(res.headers.get("payment-response"))).toEqual(SETTLED);
    expect(decodeBase64Json(res.headers.get("x-payment-response"))).toEqual(SETTLED);
    expect(await bodyOf(res)).toMatchObject({ fulfillment: { mode: "inline", payload: SOLD_GOODS }, receipt: { id: PAYMENT_ID }, redelivered: false });
    expect(of("submitPayment")).toEqual([{ checkoutId: CHECKOUT_ID, face, paymentHeader: header, handoffId: "handoff_nonce_0123456789", params: {} }]);
    expect(called()).toEqual(["payments.submitPayment"]);
  });

  it("without a payment answers the 402 with the requirements, as JSON even to a browser", async () => {
    const { fakes } = faceFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}/test/pay`, { method: "POST", headers: { accept: "text/html" } });
    expect(res.status).toBe(402);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(decodeBase64Json(res.headers.get("payment-required"))).toMatchObject({ x402Version: 2, accepts: [{ network: "eip155:84532" }] });
  });

  it("refuses a body field with 422 naming it, and a malformed or unbounded schedule, before any payment is judged", async () => {
    const { fakes, called } = faceFakes({ submit: settled() });
    const { url } = await serve.app(fakes);
    const post = (body: unknown) =>
      fetch(`${url}/c/${CHECKOUT_ID}/pay`, {
        method: "POST",
        headers: { ...json, "content-type": "application/json", "payment-signature": paymentHeader() },
        body: JSON.stringify(body),
      });
    for (const schedule of ["x", [paymentHeader()], [], Array.from({ length: 24 }, () => ({}))]) {
      const refused = await post({ schedule });
      expect(refused.status).toBe(422);
      expect(((await bodyOf(refused)).errors as { field: string }[])[0]?.field).toMatch(/^schedule/);
    }
    const unknown = await post({ payment: "x" });
    expect(unknown.status).toBe(422);
    expect(await bodyOf(unknown)).toMatchObject({ errors: [{ field: "payment", reason: "is not a known field" }] });
    expect(called()).toEqual([]);
    expect((await post({})).status).toBe(200);
  });

  it("a series: passes the held periods to payments as payment headers, and the settled answer adds the series", async () => {
    const schedule = create(paymentsV1.ScheduleSummarySchema, {
      id: "sch_Series000000000000000000",
      periods: 3,
      periodsSettled: 1,
      intervalDays: 30,
      paidThrough: timestampFromDate(new Date("2025-02-01T03:05:00.000Z")),
      nextChargeAt: timestampFromDate(new Date("2025-02-01T03:05:00.000Z")),
    });
    const { fakes, of } = faceFakes({ submit: settled({ schedule }) });
    const { url } = await serve.app(fakes);
    const held = [
      { x402Version: 2, payload: { signature: "0x1" } },
      { x402Version: 2, payload: { signature: "0x2" } },
    ];
    const res = await fetch(`${url}/c/${CHECKOUT_ID}/pay`, {
      method: "POST",
      headers: { ...json, "content-type": "application/json", "payment-signature": paymentHeader() },
      body: JSON.stringify({ schedule: held }),
    });
    expect(res.status).toBe(200);
    const sent = of("submitPayment")[0] as { heldPaymentHeaders: string[] };
    expect(sent.heldPaymentHeaders.map((h) => decodeBase64Json(h))).toEqual(held);
    expect((await bodyOf(res)).schedule).toEqual({
      id: "sch_Series000000000000000000",
      url: `${BASE_URL}/schedule/sch_Series000000000000000000`,
      status: "active",
      periods: 3,
      periods_settled: 1,
      interval_days: 30,
      paid_through: "2025-02-01T03:05:00.000Z",
      next_charge_at: "2025-02-01T03:05:00.000Z",
    });
  });

  it("an escrow face refuses schedule by name: only /c/ faces sell a series", async () => {
    const { fakes, called } = faceFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/e/esc_Chair0000000000000000000/pay`, {
      method: "POST",
      headers: { ...json, "content-type": "application/json", "payment-signature": paymentHeader() },
      body: JSON.stringify({ schedule: [{}] }),
    });
    expect(res.status).toBe(422);
    expect((await bodyOf(res)).errors).toEqual([{ field: "schedule", reason: expect.stringContaining("sells no series") }]);
    expect(called()).toEqual([]);
  });
});

describe("the socket fast path in front of the app", () => {
  it("answers a cached 402 exactly as the route does", async () => {
    const { fakes, called } = faceFakes();
    const { url } = await serve.edge(fakes);
    const viaRoute = await fetch(`${url}/c/${CHECKOUT_ID}/test`);
    const viaEdge = await fetch(`${url}/c/${CHECKOUT_ID}/test`);
    expect(called()).toEqual(["payments.quotePayment"]);
    expect(viaEdge.status).toBe(viaRoute.status);
    for (const name of [
      "payment-required",
      "content-type",
      "cache-control",
      "access-control-allow-origin",
      "access-control-expose-headers",
      "x-frame-options",
      "x-content-type-options",
    ]) {
      expect([name, viaEdge.headers.get(name)]).toEqual([name, viaRoute.headers.get(name)]);
    }
    expect(await viaEdge.text()).toBe(await viaRoute.text());
  });

  it("refuses a payment header that is not a payment without asking payments, as the route refuses", async () => {
    const { fakes, called } = faceFakes();
    const { url } = await serve.edge(fakes);
    await fetch(`${url}/c/${CHECKOUT_ID}`);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { "payment-signature": "not base64 json" } });
    expect(res.status).toBe(402);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const body = await bodyOf(res);
    expect(body).toMatchObject({ type: `${SITE_URL}/problems/payment-required`, accepts: [{ ...REQUIREMENT, resource: FACE_URL }] });
    expect(decodeBase64Json(res.headers.get("payment-required"))).toMatchObject({ error: body.reason });
    expect(called()).toEqual(["payments.quotePayment"]);
  });
});
