import { startDevchain, type RunningDevchain } from "@c402/devchain";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import type { Network } from "@x402/core/types";
import { hexToBytes, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { PayingWallet } from "../../src/domain/ports";
import { devchainTools } from "./support/devchain";
import { payHarness, problemOf, stepIndex } from "./support/harness";
import { inProcessFacilitator, startSeller, type PaidRoute, type Seller } from "./support/seller";
import { startV1Seller } from "./support/v1-seller";

/**
 * The pay engine on Base (the devchain: Base Sepolia's chain id, test USDC at
 * Base Sepolia's USDC address with EIP-3009) paying someone else's seller: an
 * `@x402/express` app whose official facilitator settles on the devchain.
 */
describe("X402PayEngine on Base (devchain, @x402/express seller)", () => {
  const PRICE = 250_000n; // 0.25 USDC
  let devchain: RunningDevchain;
  let tools: ReturnType<typeof devchainTools>;
  let seller: Seller;
  let rejectingSeller: Seller;
  let v1Seller: Awaited<ReturnType<typeof startV1Seller>>;
  let payTo: Hex;
  let walletSeq = 0;

  const route = (path: string, over: Partial<PaidRoute> = {}): PaidRoute => ({
    path,
    accepts: {
      scheme: "exact",
      network: devchain.network as Network,
      payTo,
      price: { amount: String(PRICE), asset: devchain.usdc, extra: { name: devchain.usdcName, version: devchain.usdcVersion } },
    },
    ...over,
  });

  const evmSchemes = (): [Network, ExactEvmScheme][] => [[devchain.network as Network, new ExactEvmScheme()]];

  beforeAll(async () => {
    devchain = await startDevchain({ port: 0 });
    tools = devchainTools(devchain);
    await tools.setUp();
    payTo = privateKeyToAccount(generatePrivateKey()).address;
    const schemes = evmSchemes();
    const facilitator = tools.facilitator();
    seller = await startSeller({
      facilitator: inProcessFacilitator(facilitator),
      schemes,
      paid: [
        route("/weather", {
          handler: (_req, res) => res.json({ temp_c: 22, receipt_url: "https://seller.example/r/pay_1" }),
        }),
        // Accepts the payment (verify passed), then drops the connection: nothing tells whether it settled.
        route("/drop", { handler: (req) => req.socket.destroy() }),
        // Fails after verify: the official middleware does not settle a >= 400 answer, but the buyer cannot know that.
        route("/fails", { handler: (_req, res) => res.status(500).json({ error: "origin down" }) }),
        // Asks for a token that is not USDC: no requirement a USDC wallet can pay.
        {
          path: "/other-token",
          accepts: {
            ...route("/x").accepts,
            price: { amount: "1000", asset: "0x1111111111111111111111111111111111111111", extra: { name: "X", version: "1" } },
          },
        },
      ],
      free: [
        { path: "/free", handler: (_req, res) => res.type("text/plain").send("no payment needed") },
        { path: "/big", handler: (_req, res) => res.type("application/octet-stream").send(Buffer.alloc(2 * 1024 * 1024, 7)) },
      ],
    });
    v1Seller = await startV1Seller(facilitator, {
      network: "base-sepolia",
      maxAmountRequired: String(PRICE),
      payTo,
      asset: devchain.usdc,
      extra: { name: devchain.usdcName, version: devchain.usdcVersion },
    });
    rejectingSeller = await startSeller({
      facilitator: inProcessFacilitator(facilitator, { rejectWith: "seller_says_no" }),
      schemes,
      paid: [route("/weather")],
    });
  }, 120_000);

  afterAll(async () => {
    await seller?.close();
    await rejectingSeller?.close();
    await v1Seller?.close();
    await devchain?.stop();
  });

  /** A fresh wallet holding `usdc`, its key in the harness's vault only. */
  async function walletWith(h: ReturnType<typeof payHarness>, usdc: bigint): Promise<PayingWallet> {
    const key = generatePrivateKey();
    const address = privateKeyToAccount(key).address;
    if (usdc > 0n) await tools.mint(address, usdc);
    const wallet: PayingWallet = { id: `swl_${++walletSeq}`, accountId: "acct_1", chain: "base", network: devchain.network, address };
    h.vault.put(wallet.id, hexToBytes(key));
    return wallet;
  }

  function harness(over: Partial<Parameters<typeof payHarness>[0]> = {}) {
    return payHarness({ networks: { [devchain.network]: { usdc: devchain.usdc } }, balanceOf: (w) => tools.usdcOf(w.address), ...over });
  }

  const req = (url: string, over: Partial<{ maxAtomic: bigint; idempotencyKey: string; params: Record<string, string> }> = {}) => ({
    url,
    params: {},
    actor: "key:agent_1",
    ...over,
  });

  it("pays the seller: goods received, settlement decoded, balances moved by the amount exactly, budget confirmed", async () => {
    const h = harness();
    const wallet = await walletWith(h, 1_000_000n);
    const payToBefore = await tools.usdcOf(payTo);
    const paidBefore = seller.paidRequests;

    const outcome = await h.engine.pay(wallet, req(seller.url("/weather"), { params: { city: "Lisbon" } }));

    expect(outcome.paid).toBe(true);
    expect(outcome.url).toBe(seller.url("/weather?city=Lisbon"));
    expect(outcome.goods.status).toBe(200);
    expect(outcome.goods.contentType).toMatch(/application\/json/);
    expect(JSON.parse(new TextDecoder().decode(outcome.goods.body))).toEqual({ temp_c: 22, receipt_url: "https://seller.example/r/pay_1" });
    expect(outcome.receipt).toMatchObject({
      network: devchain.network,
      payer: wallet.address,
      payTo,
      amount: PRICE,
      receiptUrl: "https://seller.example/r/pay_1",
    });
    const receipt = await tools.publicClient.getTransactionReceipt({ hash: outcome.receipt?.transaction as Hex });
    expect(receipt.status).toBe("success");
    expect(await tools.usdcOf(wallet.address)).toBe(1_000_000n - PRICE);
    expect(await tools.usdcOf(payTo)).toBe(payToBefore + PRICE);
    expect(seller.paidRequests).toBe(paidBefore + 1);
    const spend = h.budget.spends.get(outcome.receipt?.spendId ?? "");
    expect(spend).toMatchObject({
      state: "confirmed",
      amount: PRICE,
      transaction: outcome.receipt?.transaction,
      receiptUrl: "https://seller.example/r/pay_1",
      payTo,
    });
    expect(h.events.refusals).toEqual([]);
    await h.close();
  });

  it("pays a v1 seller (JSON 402 body, network named base-sepolia, X-PAYMENT and X-PAYMENT-RESPONSE)", async () => {
    const h = harness();
    const wallet = await walletWith(h, 1_000_000n);
    const payToBefore = await tools.usdcOf(payTo);
    const outcome = await h.engine.pay(wallet, req(v1Seller.url));
    expect(outcome.paid).toBe(true);
    expect(JSON.parse(new TextDecoder().decode(outcome.goods.body))).toEqual({ goods: "v1 answer" });
    expect(outcome.receipt).toMatchObject({ network: devchain.network, payer: wallet.address, amount: PRICE });
    expect(await tools.usdcOf(wallet.address)).toBe(1_000_000n - PRICE);
    expect(await tools.usdcOf(payTo)).toBe(payToBefore + PRICE);
    expect(h.budget.spends.get(outcome.receipt?.spendId ?? "")).toMatchObject({ state: "confirmed", transaction: outcome.receipt?.transaction });
    await h.close();
  });

  it("reserves the budget and reads the balance before the key is opened, and confirms after", async () => {
    const h = harness();
    const wallet = await walletWith(h, 1_000_000n);
    await h.engine.pay(wallet, req(seller.url("/weather")));
    const reserve = stepIndex(h.journal, "reserve");
    const balance = stepIndex(h.journal, "usdcOf");
    const key = stepIndex(h.journal, "withKey");
    const confirm = stepIndex(h.journal, "confirm");
    expect(reserve).toBeGreaterThanOrEqual(0);
    expect(balance).toBeGreaterThan(reserve);
    expect(key).toBeGreaterThan(balance);
    expect(confirm).toBeGreaterThan(key);
    expect(h.vault.opened).toBe(1);
    await h.close();
  });

  it("never logs the key nor the signed payment", async () => {
    const h = harness();
    const key = generatePrivateKey();
    const wallet: PayingWallet = { id: "swl_logs", accountId: "acct_1", chain: "base", network: devchain.network, address: privateKeyToAccount(key).address };
    await tools.mint(wallet.address, 1_000_000n);
    h.vault.put(wallet.id, hexToBytes(key));
    await h.engine.pay(wallet, req(seller.url("/weather")));
    const logged = h.logLines.join("\n");
    expect(logged).toContain("pay: paid");
    expect(logged).not.toContain(key.slice(2));
    expect(logged.toLowerCase()).not.toContain("signature");
    await h.close();
  });

  /** What every refusal before signing must leave: its event, nothing signed, nothing sent to the seller, no money moved. */
  async function expectNothingSpent(h: ReturnType<typeof payHarness>, wallet: PayingWallet, usdc: bigint, paidBefore: number) {
    expect(h.vault.opened).toBe(0);
    expect(seller.paidRequests).toBe(paidBefore);
    expect(await tools.usdcOf(wallet.address)).toBe(usdc);
    expect(await tools.sentBy(wallet.address)).toBe(0);
    expect(h.budget.spentToday()).toBe(0n);
  }

  it("refuses above the agent's max_usd: 403 forbidden, reason over_max_usd, recorded, nothing signed", async () => {
    const h = harness();
    const wallet = await walletWith(h, 1_000_000n);
    const paidBefore = seller.paidRequests;
    const problem = await problemOf(h.engine.pay(wallet, req(seller.url("/weather"), { maxAtomic: 100_000n })));
    expect(problem.status).toBe(403);
    expect(problem.slug).toBe("forbidden");
    expect(problem.extensions).toEqual({ reason: "over_max_usd", ceiling_usd: "0.1", amount_usd: "0.25" });
    expect(h.events.refusals).toEqual([expect.objectContaining({ walletId: wallet.id, reason: "over_max_usd", amount: PRICE, actor: "key:agent_1" })]);
    await expectNothingSpent(h, wallet, 1_000_000n, paidBefore);
    await h.close();
  });

  it("refuses above the per-payment limit: 403, reason over_per_payment_limit", async () => {
    const h = harness({ limits: { perPayment: 200_000n, perDay: 10_000_000n } });
    const wallet = await walletWith(h, 1_000_000n);
    const paidBefore = seller.paidRequests;
    const problem = await problemOf(h.engine.pay(wallet, req(seller.url("/weather"))));
    expect(problem.status).toBe(403);
    expect(problem.extensions).toMatchObject({ reason: "over_per_payment_limit", ceiling_usd: "0.2" });
    expect(h.events.refusals.map((e) => e.reason)).toEqual(["over_per_payment_limit"]);
    await expectNothingSpent(h, wallet, 1_000_000n, paidBefore);
    await h.close();
  });

  it("refuses above what is left of the day: the first payment goes through, the second is 403 over_daily_limit", async () => {
    const h = harness({ limits: { perPayment: 1_000_000n, perDay: 400_000n } });
    const wallet = await walletWith(h, 1_000_000n);
    await h.engine.pay(wallet, req(seller.url("/weather")));
    const paidBefore = seller.paidRequests;
    const problem = await problemOf(h.engine.pay(wallet, req(seller.url("/weather"))));
    expect(problem.status).toBe(403);
    expect(problem.extensions).toMatchObject({ reason: "over_daily_limit", ceiling_usd: "0.15", amount_usd: "0.25" });
    expect(h.events.refusals.map((e) => e.reason)).toEqual(["over_daily_limit"]);
    expect(seller.paidRequests).toBe(paidBefore);
    expect(await tools.usdcOf(wallet.address)).toBe(1_000_000n - PRICE);
    expect(h.vault.opened).toBe(1);
    await h.close();
  });

  it("refuses a wallet short of the amount: 402 insufficient balance, reservation released, nothing signed or sent (no gas)", async () => {
    const h = harness();
    const wallet = await walletWith(h, 100_000n);
    const paidBefore = seller.paidRequests;
    const problem = await problemOf(h.engine.pay(wallet, req(seller.url("/weather"))));
    expect(problem.status).toBe(402);
    expect(problem.slug).toBe("payment-required");
    expect(problem.message).toMatch(/balance is insufficient/);
    expect(problem.message).toContain("0.1 USDC");
    expect(problem.extensions).toMatchObject({ reason: "insufficient_balance", balance_usd: "0.1", amount_usd: "0.25" });
    expect(h.events.refusals.map((e) => e.reason)).toEqual(["insufficient_balance"]);
    expect([...h.budget.spends.values()]).toEqual([expect.objectContaining({ state: "released", reason: "insufficient_balance" })]);
    expect(h.journal).not.toContain("withKey");
    await expectNothingSpent(h, wallet, 100_000n, paidBefore);
    await h.close();
  });

  it("refuses a 402 with no USDC requirement on the wallet's network: 402, reason no_requirement_for_base, nothing reserved", async () => {
    const h = harness();
    const wallet = await walletWith(h, 1_000_000n);
    const paidBefore = seller.paidRequests;
    const problem = await problemOf(h.engine.pay(wallet, req(seller.url("/other-token"))));
    expect(problem.status).toBe(402);
    expect(problem.extensions).toMatchObject({ reason: "no_requirement_for_base" });
    expect(h.events.refusals.map((e) => e.reason)).toEqual(["no_requirement_for_base"]);
    expect(h.journal.filter((s) => s.startsWith("reserve"))).toEqual([]);
    await expectNothingSpent(h, wallet, 1_000_000n, paidBefore);
    await h.close();
  });

  it("refuses a wallet on a network the engine was not given: 503 network_not_configured, nothing signed", async () => {
    const h = payHarness({ networks: {}, balanceOf: (w) => tools.usdcOf(w.address) });
    const wallet = await walletWith(h, 1_000_000n);
    const paidBefore = seller.paidRequests;
    const problem = await problemOf(h.engine.pay(wallet, req(seller.url("/weather"))));
    expect(problem.status).toBe(503);
    expect(problem.extensions).toMatchObject({ reason: "network_not_configured" });
    expect(h.events.refusals.map((e) => e.reason)).toEqual(["network_not_configured"]);
    await expectNothingSpent(h, wallet, 1_000_000n, paidBefore);
    await h.close();
  });

  it("a seller that rejects the signed payment: 402 rejected_by_seller with its reason, reservation released, no money moved", async () => {
    const h = harness();
    const wallet = await walletWith(h, 1_000_000n);
    const problem = await problemOf(h.engine.pay(wallet, req(rejectingSeller.url("/weather"))));
    expect(problem.status).toBe(402);
    expect(problem.extensions).toMatchObject({ reason: "rejected_by_seller", seller_reason: "seller_says_no" });
    expect(h.events.refusals.map((e) => e.reason)).toEqual(["rejected_by_seller"]);
    expect([...h.budget.spends.values()]).toEqual([expect.objectContaining({ state: "released", reason: "rejected_by_seller" })]);
    expect(rejectingSeller.paidRequests).toBe(1);
    expect(await tools.usdcOf(wallet.address)).toBe(1_000_000n);
    expect(h.budget.spentToday()).toBe(0n);
    await h.close();
  });

  it("a seller whose settlement fails (PAYMENT-RESPONSE success:false): 402 rejected_by_seller, released", async () => {
    const failing = await startSeller({
      facilitator: inProcessFacilitator(tools.facilitator(), { failSettleWith: "insufficient_funds" }),
      schemes: evmSchemes(),
      paid: [route("/weather")],
    });
    const h = harness();
    const wallet = await walletWith(h, 1_000_000n);
    const problem = await problemOf(h.engine.pay(wallet, req(failing.url("/weather"))));
    expect(problem.status).toBe(402);
    expect(problem.extensions).toMatchObject({ reason: "rejected_by_seller", seller_reason: "insufficient_funds" });
    expect([...h.budget.spends.values()]).toEqual([expect.objectContaining({ state: "released", reason: "rejected_by_seller" })]);
    expect(await tools.usdcOf(wallet.address)).toBe(1_000_000n);
    await failing.close();
    await h.close();
  });

  it("a settlement still pending (settlement_pending) is not a refusal: 502 outcome_unknown, left reserved", async () => {
    const pending = await startSeller({
      facilitator: inProcessFacilitator(tools.facilitator(), { failSettleWith: "settlement_pending" }),
      schemes: evmSchemes(),
      paid: [route("/weather")],
    });
    const h = harness();
    const wallet = await walletWith(h, 1_000_000n);
    const problem = await problemOf(h.engine.pay(wallet, req(pending.url("/weather"))));
    expect(problem.status).toBe(502);
    expect(problem.extensions).toMatchObject({ reason: "outcome_unknown" });
    expect([...h.budget.spends.values()]).toEqual([expect.objectContaining({ state: "unknown" })]);
    expect(h.events.refusals).toEqual([]);
    await pending.close();
    await h.close();
  });

  it("a seller that takes the payment and drops the connection: 502 outcome_unknown, the spend left reserved and counting", async () => {
    const h = harness();
    const wallet = await walletWith(h, 1_000_000n);
    const problem = await problemOf(h.engine.pay(wallet, req(seller.url("/drop"))));
    expect(problem.status).toBe(502);
    expect(problem.slug).toBe("upstream-failed");
    const [spend] = [...h.budget.spends.values()];
    expect(problem.extensions).toEqual({ reason: "outcome_unknown", spend_id: spend?.spendId });
    expect(spend).toMatchObject({ state: "unknown", reason: "outcome_unknown", amount: PRICE });
    expect(h.budget.spentToday()).toBe(PRICE);
    expect(h.journal.some((s) => s.startsWith("release"))).toBe(false);
    await h.close();
  });

  it("a seller that answers 5xx to the signed payment: 502 outcome_unknown, left reserved (the buyer cannot tell it did not settle)", async () => {
    const h = harness();
    const wallet = await walletWith(h, 1_000_000n);
    const problem = await problemOf(h.engine.pay(wallet, req(seller.url("/fails"))));
    expect(problem.status).toBe(502);
    expect(problem.extensions).toMatchObject({ reason: "outcome_unknown" });
    expect([...h.budget.spends.values()]).toEqual([expect.objectContaining({ state: "unknown", amount: PRICE })]);
    expect(h.events.refusals).toEqual([]);
    await h.close();
  });

  it("refuses a URL the outbound guard refuses (loopback not allowed) and a non-http URL: 422 url_refused, nothing fetched", async () => {
    const h = harness({ allowLoopback: false });
    const wallet = await walletWith(h, 1_000_000n);
    const paidBefore = seller.paidRequests;
    for (const url of [seller.url("/weather"), "ftp://127.0.0.1/file", "http://10.0.0.7/paid", "not a url"]) {
      const problem = await problemOf(h.engine.pay(wallet, req(url)));
      expect(problem.status).toBe(422);
      expect(problem.extensions).toMatchObject({ reason: "url_refused" });
      expect(problem.errors).toEqual([expect.objectContaining({ field: "url" })]);
    }
    expect(h.events.refusals.map((e) => e.reason)).toEqual(["url_refused", "url_refused", "url_refused", "url_refused"]);
    await expectNothingSpent(h, wallet, 1_000_000n, paidBefore);
    await h.close();
  });

  it("answers paid:false with the goods when the URL asks for no payment", async () => {
    const h = harness();
    const wallet = await walletWith(h, 1_000_000n);
    const outcome = await h.engine.pay(wallet, req(seller.url("/free")));
    expect(outcome).toMatchObject({ paid: false, url: seller.url("/free"), goods: { status: 200, contentType: expect.stringMatching(/^text\/plain/) } });
    expect(new TextDecoder().decode(outcome.goods.body)).toBe("no payment needed");
    expect(outcome.receipt).toBeUndefined();
    expect(h.journal).toEqual([]);
    await h.close();
  });

  it("keeps at most 1 MiB of the goods", async () => {
    const h = harness();
    const wallet = await walletWith(h, 0n);
    const outcome = await h.engine.pay(wallet, req(seller.url("/big")));
    expect(outcome.paid).toBe(false);
    expect(outcome.goods.body.byteLength).toBe(1024 * 1024);
    await h.close();
  });

  it("answers the first outcome for an idempotency key already used, never a second payment", async () => {
    const h = harness();
    const wallet = await walletWith(h, 1_000_000n);
    const first = await h.engine.pay(wallet, req(seller.url("/weather"), { idempotencyKey: "idem-1" }));
    const paidAfterFirst = seller.paidRequests;
    const again = await h.engine.pay(wallet, req(seller.url("/weather"), { idempotencyKey: "idem-1" }));
    expect(again.paid).toBe(true);
    expect(again.receipt).toMatchObject({ spendId: first.receipt?.spendId, transaction: first.receipt?.transaction, amount: PRICE });
    expect(seller.paidRequests).toBe(paidAfterFirst);
    expect(await tools.usdcOf(wallet.address)).toBe(1_000_000n - PRICE);
    expect(h.vault.opened).toBe(1);
    await h.close();
  });
});
