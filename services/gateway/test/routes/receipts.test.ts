import { create } from "@bufbuild/protobuf";
import { identityV1, paymentsV1 } from "@c402/contracts";
import { BASE_URL, CHECKOUT_ID, PAYER, PAYMENT_ID, receipt, recorded, servers, SITE_URL, TX_HASH, bodyOf } from "../support/fake-gateway";

/** GET /r/{id}, /r/{id}/download and /r/by-tx/{hash} (routes/receipts.ts). */

const serve = servers();

const receiptFakes = (settled = true) =>
  recorded({
    identity: { getEmbedSettings: async () => create(identityV1.GetEmbedSettingsResponseSchema, { embedOrigins: [] }) },
    payments: {
      getReceipt: async () =>
        create(
          paymentsV1.GetReceiptResponseSchema,
          settled
            ? { receipt: receipt(), status: paymentsV1.PaymentStatus.SETTLED, txHash: TX_HASH }
            : { status: paymentsV1.PaymentStatus.PENDING, txHash: TX_HASH },
        ),
      findReceiptByTx: async () => create(paymentsV1.FindReceiptByTxResponseSchema, { paymentId: PAYMENT_ID }),
    },
  });

describe("receipts", () => {
  it("answers a settled receipt as JSON, with the split, to any origin", async () => {
    const { fakes, calls } = receiptFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/r/${PAYMENT_ID}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(await bodyOf(res)).toEqual({
      id: PAYMENT_ID,
      object: "receipt",
      checkout_id: CHECKOUT_ID,
      title: "Weather for Paris",
      network: "eip155:84532",
      asset: "USDC",
      asset_address: receipt().asset,
      amount_usd: "0.10",
      provider_amount: 100000,
      platform_amount: null,
      platform_fee_to: null,
      fee_amount: 10500,
      total: 110500,
      payer: PAYER,
      subject: receipt().subject,
      pay_to: receipt().payTo,
      tx_hash: TX_HASH,
      test_mode: true,
      settled_at: "2025-01-02T03:05:00.000Z",
      sold_by: null,
      parties: null,
      handoff_id: null,
      split: { seller: 100000, platform: null, protocol_fee: 10500, total: 110500, currency: "USDC", decimals: 6 },
      delivery: { outcome: "delivered" },
      receipt_url: `${BASE_URL}/r/${PAYMENT_ID}`,
    });
    expect(calls.map((c) => c.req)).toEqual([{ paymentId: PAYMENT_ID }]);
  });

  it("shows a browser the HTML receipt, and offers it as a download", async () => {
    const { fakes } = receiptFakes();
    const { url } = await serve.app(fakes);
    const page = await fetch(`${url}/r/${PAYMENT_ID}`, { headers: { accept: "text/html" } });
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain(`<title>Receipt ${PAYMENT_ID}</title>`);
    expect(html).toContain("<td>Total paid</td><td>0.110500 USDC</td>");
    expect(html).toContain("Rehearsal: this payment was settled simulated");
    const download = await fetch(`${url}/r/${PAYMENT_ID}/download`);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toBe(`attachment; filename="receipt-${PAYMENT_ID}.html"`);
    expect(await download.text()).toBe(html);
  });

  it("answers 202 pending while the payment settles, and has no download yet", async () => {
    const { fakes } = receiptFakes(false);
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/r/${PAYMENT_ID}`);
    expect(res.status).toBe(202);
    expect(await bodyOf(res)).toEqual({ id: PAYMENT_ID, status: "pending", tx_hash: TX_HASH, message: expect.any(String) });
    const download = await fetch(`${url}/r/${PAYMENT_ID}/download`);
    expect(download.status).toBe(404);
    expect((await bodyOf(download)).type).toBe(`${SITE_URL}/problems/not-found`);
  });

  it("knows only payment ids, and redirects from a transaction hash to its receipt", async () => {
    const { fakes, calls } = receiptFakes();
    const { url } = await serve.app(fakes);
    expect((await fetch(`${url}/r/${CHECKOUT_ID}`)).status).toBe(404);
    expect(calls).toHaveLength(0);
    const res = await fetch(`${url}/r/by-tx/${TX_HASH}`, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${BASE_URL}/r/${PAYMENT_ID}`);
    expect(calls.map((c) => c.req)).toEqual([{ txHash: TX_HASH }]);
  });
});
