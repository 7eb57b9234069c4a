import { create } from "@bufbuild/protobuf";
import { paymentsV1 } from "@c402/contracts";
import { BASE_URL, CHECKOUT_ID, PAYMENT_ID, recorded, servers, bodyOf } from "../support/fake-gateway";

/** GET /c/{id}/handoff/{nonce}: the page that handed a purchase off polls for its payment (routes/handoff.ts). */

const serve = servers();
const NONCE = "qr_nonce_0123456789abcdef";

const handoffFakes = () =>
  recorded({ payments: { findHandoff: async () => create(paymentsV1.FindHandoffResponseSchema, { paymentId: PAYMENT_ID, testMode: true }) } });

describe("handoff", () => {
  it("answers the payment that carried the nonce with its receipt URL, never cached", async () => {
    const { fakes, calls } = handoffFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}/handoff/${NONCE}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await bodyOf(res)).toEqual({ payment_id: PAYMENT_ID, receipt_url: `${BASE_URL}/r/${PAYMENT_ID}`, escrow_state: null, test_mode: true });
    expect(calls.map((c) => c.req)).toEqual([{ checkoutId: CHECKOUT_ID, handoffId: NONCE }]);
  });

  it("refuses a malformed nonce with 422 without asking payments", async () => {
    const { fakes, calls } = handoffFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/c/${CHECKOUT_ID}/handoff/short`);
    expect(res.status).toBe(422);
    expect((await bodyOf(res)).errors).toEqual([{ field: "nonce", reason: expect.stringMatching(/^must match /) }]);
    expect(calls).toHaveLength(0);
  });
});
