import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { catalogV1, paymentsV1 } from "@c402/contracts";
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
const SETTLED = JSON.stringify({ success: true, transaction: TX_HASH, network: "eip155:84532", payer: "0x2222222222222222222222222222222222222222" });

type Submit = (req: MessageInitShape<typeof paymentsV1.SubmitPaymentRequestSchema>) => Promise<paymentsV1.SubmitPaymentResponse>;

/** Catalog and payments for one checkout, recording every request. */
function faceFakes(opts: { checkout?: MessageInitShape<typeof catalogV1.CheckoutSchema>; settlement?: paymentsV1.SettlementKind; submit?: Submit } = {}) {
  return recorded({
    catalog: { getCheckout: async () => create(catalogV1.GetCheckoutResponseSchema, { checkout: checkout(opts.checkout) }) },
    payments: {
      quotePayment: async () => quote(opts.settlement),
      submitPayment: async (req) => {
        if (!opts.submit) throw new Error("no payment expected");
        return opts.submit(req);
      },
    },
  });
}

const settled =
  (init: MessageInitShape<typeof paymentsV1.SubmitPaymentResponseSchema> = {}): Submit =>
  async () =>
    create(paymentsV1.SubmitPaymentResponseSchema, {
      receipt: receipt(),
      redelivered: false,
      settleResponseJson: SETTLED,
      status: paymentsV1.PaymentStatus.SETTLED,
      paymentId: PAYMENT_ID,
      txHash: TX_HASH,
      ...init,
    });

const json = { accept: "application/json" };

describe("the unpaid 402 of a face", () => {
  it("answers the test face with x402 v2 requirements in PAYMENT-REQUIRED and the body, plus the offer and endpoint", async () => {
    const { fakes, of } = faceFakes();
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
    expect(of("quotePayment")).toEqual([expect.objectContaining({ checkoutId: CHECKOUT_ID, face: paymentsV1.Face.TEST })]);
  });

  it("answers the live face of an armed checkout as on-chain, and of an unarmed one as a rehearsal", async () => {
    const armed = faceFakes({ checkout: { armed: true }, settlement: paymentsV1.SettlementKind.ONCHAIN });
    const live = await bodyOf(await fetch(`${(await serve.app(armed.fakes)).url}/c/${CHECKOUT_ID}`, { headers: json }));
    expect(live.endpoint).toMatchObject({ url: FACE_URL, settlement: "onchain", rehearsal: { test_url: `${FACE_URL}/test` } });
    expect(live.endpoint.note).toBeUndefined();
    expect(armed.of("quotePayment")).toEqual([expect.objectContaining({ face: paymentsV1.Face.LIVE })]);

    const unarmed = faceFakes();
    const rehearsing = await bodyOf(await fetch(`${(await serve.app(unarmed.fakes)).url}/c/${CHECKOUT_ID}`, { headers: json }));
    expect(rehearsing.endpoint.settlement).toBe("simulated");
    expect(rehearsing.endpoint.note).toMatch(/has not gone live yet/);
  });

  it("answers the v1 body on ?x402_version=1 (header still v2) and refuses any other version with 422", async () => {
    const { fakes } = faceFakes();
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
  });

  it("shows a browser the pay page, still with PAYMENT-REQUIRED", async () => {
    const { fakes } = faceFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}/test`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(402);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("payment-required")).not.toBeNull();
    const page = await res.text();
    expect(page).toContain("<title>Weather for Paris</title>");
    expect(page).toContain("<strong>0.110500 USDC</strong>");
    expect(page).toContain("rehearsal: settles without real money");
  });

  it("reuses the answer for the next request instead of asking catalog and payments again", async () => {
    const { fakes, of } = faceFakes();
    const { url } = await serve.app(fakes);
    const first = await (await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: json })).text();
    const second = await (await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: json })).text();
    expect(second).toBe(first);
    expect(of("getCheckout")).toHaveLength(1);
    expect(of("quotePayment")).toHaveLength(1);
  });

  it("knows only checkout ids under /c/, and answers CORS preflights", async () => {
    const { fakes, of } = faceFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${PAYMENT_ID}`, { headers: json });
    expect(res.status).toBe(404);
    expect((await bodyOf(res)).type).toBe(`${SITE_URL}/problems/not-found`);
    expect(of("getCheckout")).toHaveLength(0);
    const preflight = await fetch(`${url}/c/${CHECKOUT_ID}/test`, { method: "OPTIONS" });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("GET, POST, OPTIONS");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("PAYMENT-SIGNATURE");
  });
});

describe("a paid request", () => {
  it("is judged by payments and answered 200 with the goods, the receipt and PAYMENT-RESPONSE", async () => {
    const { fakes, of } = faceFakes({ submit: settled() });
    const { url } = await serve.app(fakes);
    const header = paymentHeader();
    const res = await fetch(`${url}/c/${CHECKOUT_ID}/test?h=handoff_nonce_0123456789`, { headers: { ...json, "payment-signature": header } });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(decodeBase64Json(res.headers.get("payment-response"))).toEqual(JSON.parse(SETTLED));
    expect(res.headers.get("x-payment-response")).toBeNull();
    expect(await bodyOf(res)).toMatchObject({
      fulfillment: { mode: "inline", payload: { temp_c: 21 } },
      receipt: { id: PAYMENT_ID, object: "receipt", checkout_id: CHECKOUT_ID, total: 110500, test_mode: true, tx_hash: TX_HASH },
      receipt_url: `${BASE_URL}/r/${PAYMENT_ID}`,
      redelivered: false,
      test_mode: true,
    });
    expect(of("submitPayment")).toEqual([
      { checkoutId: CHECKOUT_ID, face: paymentsV1.Face.TEST, paymentHeader: header, handoffId: "handoff_nonce_0123456789" },
    ]);
  });

  it("answers a legacy X-PAYMENT with X-PAYMENT-RESPONSE too", async () => {
    const { fakes, of } = faceFakes({ submit: settled() });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { ...json, "x-payment": paymentHeader() } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-payment-response")).toBe(res.headers.get("payment-response"));
    expect(of("submitPayment")).toEqual([expect.objectContaining({ face: paymentsV1.Face.LIVE })]);
    expect(of("submitPayment")[0]).not.toHaveProperty("handoffId");
  });

  it("ends a single-shot checkout's cached 402 with its sale, and keeps a reusable one's", async () => {
    for (const [reusable, quotesAfter] of [
      [false, 2],
      [true, 1],
    ] as const) {
      const { fakes, of } = faceFakes({ checkout: { reusable }, submit: settled() });
      const { url } = await serve.app(fakes);
      await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: json });
      expect((await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { "payment-signature": paymentHeader() } })).status).toBe(200);
      await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: json });
      expect(of("quotePayment").filter((q) => (q as { face: number }).face === paymentsV1.Face.LIVE)).toHaveLength(quotesAfter);
    }
  });

  it("answers 202 pending with the receipt URL to poll when the settlement is not confirmed yet", async () => {
    const { fakes } = faceFakes({ submit: settled({ receipt: undefined, status: paymentsV1.PaymentStatus.PENDING }) });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { "payment-signature": paymentHeader() } });
    expect(res.status).toBe(202);
    expect(res.headers.get("payment-response")).not.toBeNull();
    expect(await bodyOf(res)).toMatchObject({
      status: "pending",
      payment_id: PAYMENT_ID,
      tx_hash: TX_HASH,
      receipt_url: `${BASE_URL}/r/${PAYMENT_ID}`,
      poll: `${BASE_URL}/r/${PAYMENT_ID}`,
    });
  });

  it("refused by payments is a 402 problem with fresh requirements naming the reason", async () => {
    const { fakes } = faceFakes({
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
  });

  it("refused after a failed settlement carries the failure SettleResponse in PAYMENT-RESPONSE (and X-PAYMENT-RESPONSE for X-PAYMENT)", async () => {
    const { fakes } = faceFakes({
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
  });

  it("passes any other problem of payments through with its own status", async () => {
    const { fakes } = faceFakes({
      submit: async () => {
        throw new ProblemError("gone", "This checkout has expired.");
      },
    });
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { "payment-signature": paymentHeader() } });
    expect(res.status).toBe(410);
    expect(await bodyOf(res)).toMatchObject({ type: `${SITE_URL}/problems/gone`, detail: { message: "This checkout has expired." } });
  });
});

describe("the socket fast path in front of the app", () => {
  it("answers a cached 402 exactly as the route does", async () => {
    const { fakes, of } = faceFakes();
    const { url } = await serve.edge(fakes);
    const viaRoute = await fetch(`${url}/c/${CHECKOUT_ID}/test`);
    const viaEdge = await fetch(`${url}/c/${CHECKOUT_ID}/test`);
    expect(of("quotePayment")).toHaveLength(1);
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
    const { fakes, of } = faceFakes();
    const { url } = await serve.edge(fakes);
    await fetch(`${url}/c/${CHECKOUT_ID}`);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}`, { headers: { "payment-signature": "not base64 json" } });
    expect(res.status).toBe(402);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const body = await bodyOf(res);
    expect(body).toMatchObject({ type: `${SITE_URL}/problems/payment-required`, accepts: [{ ...REQUIREMENT, resource: FACE_URL }] });
    expect(decodeBase64Json(res.headers.get("payment-required"))).toMatchObject({ error: body.reason });
    expect(of("submitPayment")).toHaveLength(0);
  });
});
