import type { PaymentRequirements } from "@c402/x402";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { devchainWallets, type DevchainWallets } from "../src/devchain";
import { baseUrl, call, decoded, newCheckout, newSeller, payRehearsal } from "../src/http";

/**
 * Platform mode (spec, Platforms): GET and PUT /v1/account/platform, the
 * terms a checkout copies at create (frozen), and the cut paid on-chain by the
 * split contract on live settlement, shown on the receipt.
 */
describe("platform mode", () => {
  let chain: DevchainWallets;

  beforeAll(async () => {
    chain = await devchainWallets(5);
  });

  const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;

  /** A seller in platform mode taking `bps`, its fee wallet, and a sub-seller's wallet. */
  async function platform(bps = 300) {
    const seller = await newSeller();
    const feeWallet = freshAddress();
    const put = await call("PUT", "/v1/account/platform", {
      key: seller.key,
      body: { platform_account: true, platform_fee_bps: bps, platform_fee_to: feeWallet.toLowerCase() },
    });
    expect(put.status).toBe(200);
    return { seller, feeWallet, subSeller: freshAddress() };
  }

  it("an account is not a platform until it says so; reading takes any key, changing it takes full", async () => {
    const seller = await newSeller();
    const got = await call("GET", "/v1/account/platform", { key: seller.key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ platform_account: false, platform_fee_bps: 0, platform_fee_to: null, fee_wallets: {}, max_bps: 2000 });

    const body = { platform_account: true, platform_fee_bps: 250, platform_fee_to: freshAddress() };
    for (const scope of ["read_only", "payments"]) {
      const minted = await call("POST", "/v1/keys", { key: seller.key, body: { scope, mode: "test" } });
      expect((await call("GET", "/v1/account/platform", { key: minted.body.secret })).status).toBe(200);
      const refused = await call("PUT", "/v1/account/platform", { key: minted.body.secret, body });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ needed_scope: "full" });
    }
    expect((await call("PUT", "/v1/account/platform", { body })).status).toBe(401);
    expect((await call("GET", "/v1/account/platform", { key: seller.key })).body.platform_account).toBe(false);
  });

  it("PUT replaces the settings (wallet checksummed, fee wallet per network) and records platform.updated", async () => {
    const seller = await newSeller();
    const feeWallet = freshAddress();
    const put = await call("PUT", "/v1/account/platform", {
      key: seller.key,
      body: { platform_account: true, platform_fee_bps: 250, platform_fee_to: feeWallet.toLowerCase() },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      platform_account: true,
      platform_fee_bps: 250,
      platform_fee_to: getAddress(feeWallet),
      fee_wallets: { "eip155:84532": getAddress(feeWallet) },
      max_bps: 2000,
    });
    expect((await call("GET", "/v1/account/platform", { key: seller.key })).body).toEqual(put.body);
    const events = await call("GET", "/v1/account/events?action=platform.", { key: seller.key });
    expect(events.body.events).toEqual([
      expect.objectContaining({
        action: "platform.updated",
        actor: expect.stringMatching(/^key:sk_test_/),
        detail: { platform_account: true, platform_fee_bps: 250, platform_fee_to: getAddress(feeWallet) },
      }),
    ]);
  });

  it("refuses a bad body with 422 naming each field, and changes nothing", async () => {
    const seller = await newSeller();
    const wallet = freshAddress();
    const cases: [unknown, string[]][] = [
      [{ platform_account: true, platform_fee_bps: 2001, platform_fee_to: wallet }, ["platform_fee_bps"]],
      [{ platform_account: true, platform_fee_bps: 1.5, platform_fee_to: wallet }, ["platform_fee_bps"]],
      [{ platform_account: false, platform_fee_bps: 100, platform_fee_to: wallet }, ["platform_fee_bps"]],
      [{ platform_account: true, platform_fee_bps: 100 }, ["platform_fee_to"]],
      [{ platform_account: true, platform_fee_bps: 100, platform_fee_to: null }, ["platform_fee_to"]],
      [{ platform_account: true, platform_fee_bps: 100, platform_fee_to: "0x1234" }, ["platform_fee_to"]],
      [{ platform_account: true, platform_fee_bps: 100, platform_fee_to: getAddress(wallet).replace(/[a-f]/, (c) => c.toUpperCase()) }, ["platform_fee_to"]],
      [{ platform_account: true }, ["platform_fee_bps"]],
      [{ platform_account: "yes", platform_fee_bps: 0 }, ["platform_account"]],
      [{ platform_account: true, platform_fee_bps: 0, fee: 1 }, ["fee"]],
    ];
    for (const [body, fields] of cases) {
      const r = await call("PUT", "/v1/account/platform", { key: seller.key, body });
      expect({ body, status: r.status }).toEqual({ body, status: 422 });
      expect(r.body.errors.map((e: { field: string }) => e.field)).toEqual(fields);
    }
    expect((await call("PUT", "/v1/account/platform", { key: seller.key, body: [] })).status).toBe(422);
    expect((await call("GET", "/v1/account/platform", { key: seller.key })).body.platform_account).toBe(false);
  });

  it("a live sale pays the cut to the platform on-chain through the split; the receipt shows it and the checkout keeps its frozen fee", async () => {
    const { seller, feeWallet, subSeller } = await platform(300);
    // A platform sells for sub-sellers: its own payout wallet is not copied unless asked for.
    const noPayTo = await call("POST", "/v1/checkouts", { key: seller.key, body: { title: "Forecast", price_usd: "1.00", test_mode: false } });
    expect(noPayTo.status).toBe(422);
    expect(noPayTo.body.errors).toEqual([{ field: "pay_to", reason: expect.stringContaining("platform account") }]);

    const checkout = await newCheckout(seller.key, {
      title: "Forecast",
      price_usd: "0.50",
      payload: { ok: true },
      pay_to: subSeller,
      test_mode: false,
      reusable: true,
    });
    expect(checkout).toMatchObject({
      pay_to: getAddress(subSeller),
      platform_fee_bps: 300,
      platform_fee_to: getAddress(feeWallet),
      sold_by: seller.accountId,
      inherit_account_payouts: false,
    });
    // Changing the account's fee later leaves the checkout's frozen terms alone.
    await call("PUT", "/v1/account/platform", { key: seller.key, body: { platform_account: true, platform_fee_bps: 100, platform_fee_to: freshAddress() } });
    expect((await call("GET", `/v1/checkouts/${checkout.id}`, { key: seller.key })).body).toMatchObject({
      platform_fee_bps: 300,
      platform_fee_to: getAddress(feeWallet),
    });

    const quote = await call("GET", `/c/${checkout.id}`);
    const requirement = decoded(quote.headers.get("payment-required")).accepts[0] as PaymentRequirements;
    // The protocol fee (0.5% + $0.01) goes on top; the cut comes out of the price. (0.50: the official client's default spend cap is $1.)
    expect(requirement.amount).toBe("512500");
    const ordinary = await newCheckout((await newSeller()).key, { title: "Same price", price_usd: "0.50", pay_to: subSeller, test_mode: false });
    const ordinaryPayTo = (decoded((await call("GET", `/c/${ordinary.id}`)).headers.get("payment-required")).accepts[0] as PaymentRequirements).payTo;
    expect(requirement.payTo).not.toBe(ordinaryPayTo);

    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.fund(buyer.address, 2_000_000n);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: buyer });
    const res = await wrapFetchWithPayment(fetch, client)(`${baseUrl()}/c/${checkout.id}`, { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    const { receipt } = (await res.json()) as { receipt: Record<string, unknown> };
    expect(receipt).toMatchObject({
      test_mode: false,
      provider_amount: 485_000,
      platform_amount: 15_000,
      platform_fee_to: getAddress(feeWallet),
      fee_amount: 12_500,
      total: 512_500,
      pay_to: getAddress(subSeller),
      sold_by: seller.accountId,
      split: { seller: 485_000, platform: 15_000, protocol_fee: 12_500, total: 512_500 },
    });
    expect(await chain.balance(buyer.address)).toBe(2_000_000n - 512_500n);
    expect(await chain.balance(subSeller)).toBe(485_000n);
    expect(await chain.balance(feeWallet)).toBe(15_000n);
    // The receipt as anyone reads it later, and its page.
    expect((await call("GET", `/r/${receipt.id}`, { headers: { accept: "application/json" } })).body).toMatchObject({
      platform_amount: 15_000,
      platform_fee_to: getAddress(feeWallet),
    });
    const page = await call("GET", `/r/${receipt.id}`, { headers: { accept: "text/html" } });
    expect(page.text).toContain(getAddress(feeWallet));
    expect(page.text).toContain("Sold by");
  });

  it("the per-create fee wins (0 included), sold_by names the slug, rehearsals split the same way, and an ordinary seller cannot take a cut", async () => {
    const { seller, subSeller } = await platform(500);
    const slug = `market-${Date.now().toString(36)}`;
    expect((await call("PATCH", "/auth/me", { key: seller.key, body: { slug } })).status).toBe(200);
    const noCut = await newCheckout(seller.key, { pay_to: subSeller, platform_fee_bps: 0 });
    expect(noCut).toMatchObject({ platform_fee_bps: 0, platform_fee_to: null, sold_by: slug });
    const ownCut = await newCheckout(seller.key, { pay_to: subSeller, platform_fee_bps: 2000, price_usd: "0.10" });
    expect(ownCut).toMatchObject({ platform_fee_bps: 2000, sold_by: slug });
    const inherited = await newCheckout(seller.key, { inherit_account_payouts: true });
    expect(inherited).toMatchObject({ pay_to: seller.wallet.address, inherit_account_payouts: true, platform_fee_bps: 500 });

    const rehearsed = (await payRehearsal(ownCut.id)).body.receipt;
    expect(rehearsed).toMatchObject({ test_mode: true, provider_amount: 80_000, platform_amount: 20_000, fee_amount: 10_500, total: 110_500, sold_by: slug });
    expect((await payRehearsal(noCut.id)).body.receipt).toMatchObject({ platform_amount: null, platform_fee_to: null, sold_by: slug });

    const ordinary = await newSeller();
    const refused = await call("POST", "/v1/checkouts", { key: ordinary.key, body: { title: "x", price_usd: "1", platform_fee_bps: 100 } });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([{ field: "platform_fee_bps", reason: expect.stringContaining("platform mode") }]);
    expect(await newCheckout(ordinary.key)).toMatchObject({ platform_fee_bps: 0, platform_fee_to: null, sold_by: null });
  });
});
