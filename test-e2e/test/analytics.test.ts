import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { encodeHeader, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { devchainWallets } from "../src/devchain";
import { baseUrl, call, decoded, newCheckout, newSeller, payRehearsal } from "../src/http";

/**
 * GET /v1/analytics over the running services: a window of UTC days with
 * every day listed, sales summed to the atomic unit per day and per
 * checkout, distinct and returning buyers, deliveries that failed on the
 * seller's side, and what live packages still owe.
 */
describe("analytics", () => {
  let origin: FakeOrigin;
  beforeAll(async () => {
    origin = await startFakeOrigin();
  });
  afterAll(() => origin.close());

  it("sums the rehearsal ledger exactly, counts buyers and the seller's failed deliveries", async () => {
    const seller = await newSeller();
    const inline = await newCheckout(seller.key, { title: "Tides", reusable: true });
    // One buyer twice, two buyers once: 3 distinct, 1 returning.
    const returning = privateKeyToAccount(generatePrivateKey());
    for (const buyer of [returning, returning]) {
      const quote = await call("GET", `/c/${inline.id}/test`);
      const required = decoded(quote.headers.get("payment-required"));
      const payment = encodeHeader(await signExactEvmPayment(buyer, required.accepts[0] as PaymentRequirements));
      expect((await call("GET", `/c/${inline.id}/test`, { headers: { "PAYMENT-SIGNATURE": payment } })).status).toBe(200);
    }
    await payRehearsal(inline.id);
    await payRehearsal(inline.id);
    // A relay checkout whose origin fails: the purchase is not charged and counts as a failed delivery.
    const failing = await newCheckout(seller.key, { title: "Down", payload: undefined, origin_url: `${origin.url}/status/503`, reusable: true });
    const quote = await call("GET", `/c/${failing.id}/test`);
    const payment = encodeHeader(
      await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), decoded(quote.headers.get("payment-required")).accepts[0] as PaymentRequirements),
    );
    expect((await call("GET", `/c/${failing.id}/test`, { headers: { "PAYMENT-SIGNATURE": payment } })).status).toBe(502);

    const r = await call("GET", "/v1/analytics?days=7&test_mode=true", { key: seller.key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      object: "analytics",
      days: 7,
      test_mode: true,
      earnings: { payments: 4, gross_usd: "0.400000", seller_amount: 400_000, fee_amount: 42_000, total: 442_000 },
      buyers: { distinct: 3, returning: 1 },
      failed_deliveries: { purchases: 1, package_calls: 0, total: 1 },
    });
    expect(r.body.earnings.per_day).toHaveLength(7);
    expect(r.body.earnings.per_day.at(-1)).toMatchObject({ date: new Date().toISOString().slice(0, 10), payments: 4, total: 442_000 });
    expect(r.body.earnings.per_checkout).toEqual([expect.objectContaining({ checkout_id: inline.id, title: "Tides", payments: 4, seller_amount: 400_000 })]);
    // The real ledger has none of it.
    expect((await call("GET", "/v1/analytics", { key: seller.key })).body).toMatchObject({
      days: 30,
      earnings: { payments: 0, total: 0 },
      buyers: { distinct: 0 },
    });
    const bad = await call("GET", "/v1/analytics?days=0&test_mode=maybe", { key: seller.key });
    expect([bad.status, bad.body.errors.map((e: { field: string }) => e.field)]).toEqual([422, ["days", "test_mode"]]);
  });

  it("a live package's unspent calls are a liability until spent; the real ledger matches the chain", async () => {
    const seller = await newSeller();
    const chain = await devchainWallets(16);
    const buyer = await chain.fundedBuyer(5_000_000n);
    const c = await newCheckout(seller.key, {
      title: "API, 4 calls",
      price_usd: "2.00",
      payload: undefined,
      origin_url: `${origin.url}/echo`,
      max_deliveries: 4,
      test_mode: false,
      reusable: true,
    });
    const client = x402Client.fromConfig({ schemes: [], spendControls: { maxAmountPerPayment: "$5" } });
    registerExactEvmScheme(client, { signer: buyer });
    const bought = await wrapFetchWithPayment(fetch, client)(`${baseUrl()}/c/${c.id}`, { headers: { accept: "application/json" } });
    expect(bought.status).toBe(200);
    const spent = 5_000_000n - (await chain.balance(buyer.address));
    const r = await call("GET", "/v1/analytics?days=1", { key: seller.key });
    expect(r.body.earnings).toMatchObject({ payments: 1, total: Number(spent), seller_amount: 2_000_000 });
    expect(r.body.liabilities).toEqual({
      live_keys: 1,
      calls_unspent: 3,
      unearned: { amount: "1.500000", currency: "USD" },
      offers: [{ checkout_id: c.id, live_keys: 1, calls_unspent: 3, unearned: { amount: "1.500000", currency: "USD" } }],
    });
  });
});
