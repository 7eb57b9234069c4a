import { startWebhookReceiver } from "@c402/testkit/webhook-receiver";
import { TestUSDC } from "@c402/evm-contracts";
import { createWalletClient, http, parseSignature, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { DEVCHAIN_USDC, devchainWallets, type DevchainWallets } from "../src/devchain";
import { call, newSeller } from "../src/http";
import { seriesOnceIn, subscribe } from "../src/series";
import { signTypedJson, type TypedDataJson } from "../src/typed-data";

/**
 * Recurring series end to end (spec, Schedule; States and transitions:
 * Recurring series; ADR 20): a buyer pays period 0 and signs the held
 * periods in one purchase; the schedules service charges each on its date
 * by the chain's clock, which this suite moves forward (evm_increaseTime), so
 * it runs after every other suite of its run (src/sequencer.js).
 */

const DAY = 86_400;

describe("recurring series (the chain's clock moved forward)", () => {
  let chain: DevchainWallets;

  beforeAll(async () => {
    chain = await devchainWallets(2);
  });

  async function seriesCheckout(periods: number, testMode = false) {
    const seller = await newSeller();
    const created = await call("POST", "/v1/checkouts", {
      key: seller.key,
      body: {
        title: "Weekly market report",
        price_usd: "1.00",
        payload: { report: "week 1" },
        schedule_interval_days: 1,
        schedule_periods: periods,
        reusable: true,
        test_mode: testMode,
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.schedule).toEqual({ interval_days: 1, periods });
    return { seller, checkoutId: created.body.id as string };
  }

  it("a 3-period series runs to completed: three receipts, exactly three transfers, schedule.* and checkout.paid webhooks", async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { seller, checkoutId } = await seriesCheckout(3);
      const hook = await call("POST", "/v1/webhooks", {
        key: seller.key,
        body: { url: `${receiver.url}/series`, events: ["checkout.paid", "schedule.started", "schedule.charged", "schedule.completed"] },
      });
      expect(hook.status).toBe(201);
      const unpaid = await call("GET", `/c/${checkoutId}`);
      expect(unpaid.status).toBe(402);
      expect(unpaid.body.accepts.every((a: any) => a.network.startsWith("eip155:"))).toBe(true);
      expect(unpaid.body.accepts[0].extra.schedule).toMatchObject({ interval_days: 1, periods: 3 });

      const buyer = privateKeyToAccount(generatePrivateKey());
      const total = BigInt(unpaid.body.accepts[0].amount);
      await chain.fund(buyer.address, 3n * total);
      const sellerBefore = await chain.balance(seller.wallet.address);
      const { prepared, paid } = await subscribe(`/c/${checkoutId}`, buyer);
      expect(prepared.schedule).toHaveLength(2);
      expect(prepared.schedule[0].valid_before).toBe(prepared.schedule[1].valid_after);
      expect(paid.status).toBe(200);
      expect(paid.body.schedule).toMatchObject({ status: "active", periods: 3, periods_settled: 1 });
      const id = paid.body.schedule.id as string;
      expect(await chain.balance(buyer.address)).toBe(2n * total);

      const started = await seriesOnceIn(seller.key, id, (s) => s.status === "active");
      expect(started.periods_detail.map((p: any) => p.status)).toEqual(["settled", "scheduled", "scheduled"]);

      // Nothing is charged before its window opens.
      await new Promise((r) => setTimeout(r, 4_000));
      expect(await chain.balance(buyer.address)).toBe(2n * total);

      await chain.advanceClock(DAY + 60);
      await seriesOnceIn(seller.key, id, (s) => s.periods_settled === 2);
      expect(await chain.balance(buyer.address)).toBe(total);
      await chain.advanceClock(DAY);
      const done = await seriesOnceIn(seller.key, id, (s) => s.status === "completed");
      expect(done).toMatchObject({ periods: 3, periods_settled: 3, next_charge_at: null });
      expect(await chain.balance(buyer.address)).toBe(0n);
      const receipts = done.periods_detail.map((p: any) => p.receipt_url);
      expect(new Set(receipts).size).toBe(3);
      let provider = 0n;
      for (const url of receipts) {
        const r = await call("GET", new URL(url).pathname, { headers: { accept: "application/json" } });
        expect(r.status).toBe(200);
        provider += BigInt(r.body.provider_amount);
      }
      expect(await chain.balance(seller.wallet.address)).toBe(sellerBefore + provider);

      await receiver.waitFor(7, 30_000);
      await new Promise((r) => setTimeout(r, 1_000));
      const events = receiver.received.map((d) => JSON.parse(d.rawBody) as { event: string; data: Record<string, any> });
      expect(events.map((e) => e.event).sort()).toEqual(
        ["checkout.paid", "checkout.paid", "checkout.paid", "schedule.charged", "schedule.charged", "schedule.completed", "schedule.started"].sort(),
      );
      expect(events.find((e) => e.event === "schedule.completed")!.data.schedule).toMatchObject({ id, status: "completed", periods: 3, periods_settled: 3 });
    } finally {
      await receiver.close();
    }
  }, 180_000);

  it("a buyer short at period 1 gets one charge_failed; a top-up inside the window settles it; a closed window lapses the series", async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { seller, checkoutId } = await seriesCheckout(3);
      await call("POST", "/v1/webhooks", {
        key: seller.key,
        body: { url: `${receiver.url}/s`, events: ["schedule.charge_failed", "schedule.charged", "schedule.lapsed"] },
      });
      const buyer = privateKeyToAccount(generatePrivateKey());
      const total = BigInt((await call("GET", `/c/${checkoutId}`)).body.accepts[0].amount);
      await chain.fund(buyer.address, total);
      const { paid } = await subscribe(`/c/${checkoutId}`, buyer);
      expect(paid.status).toBe(200);
      const id = paid.body.schedule.id as string;
      await chain.advanceClock(DAY + 60);
      const failed = await seriesOnceIn(seller.key, id, (s) => s.periods_detail[1].status === "retrying");
      expect(failed.periods_detail[1]).toMatchObject({ last_failure: expect.stringMatching(/insufficient/) });
      await chain.fund(buyer.address, total);
      await seriesOnceIn(seller.key, id, (s) => s.periods_settled === 2, 120_000);
      // Period 2: nothing funded; its window closes unsettled and the series lapses.
      await chain.advanceClock(DAY + 60);
      await seriesOnceIn(seller.key, id, (s) => s.periods_detail[2].status === "retrying");
      await chain.advanceClock(DAY);
      const lapsed = await seriesOnceIn(seller.key, id, (s) => s.status === "lapsed");
      expect(lapsed.periods_detail.map((p: any) => p.status)).toEqual(["settled", "settled", "lapsed"]);
      await new Promise((r) => setTimeout(r, 1_500));
      const events = receiver.received.map((d) => JSON.parse(d.rawBody) as { event: string; data: Record<string, any> });
      expect(events.filter((e) => e.event === "schedule.charge_failed").map((e) => e.data.period)).toEqual([1, 2]);
      expect(events.filter((e) => e.event === "schedule.lapsed")).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  }, 240_000);

  it("an on-chain cancel: the buyer's cancelAuthorizations land, and submitting a held authorization afterwards reverts", async () => {
    const { seller, checkoutId } = await seriesCheckout(3);
    const buyer = privateKeyToAccount(generatePrivateKey());
    const total = BigInt((await call("GET", `/c/${checkoutId}`)).body.accepts[0].amount);
    await chain.fund(buyer.address, 3n * total);
    const { paid, schedule } = await subscribe(`/c/${checkoutId}`, buyer);
    const id = paid.body.schedule.id as string;
    // Read at once, before the schedules service can have taken period 0's payment.settled: it starts the series from payments' record.
    const view = await call("GET", `/schedule/${id}`);
    expect(view.status).toBe(200);
    expect(view.body.cancel.message).toContain(id);
    expect(view.body.cancel.onchain).toHaveLength(2);
    const authorizations = await Promise.all(
      view.body.cancel.onchain.map(async (c: { nonce: string; typed_data: TypedDataJson }) => {
        const { v, r, s } = parseSignature(await signTypedJson(buyer, c.typed_data));
        return { nonce: c.nonce, signature: { v: Number(v), r, s } };
      }),
    );
    const cancelled = await call("POST", `/schedule/${id}/cancel`, { body: { authorizations } });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.schedule.status).toBe("cancelled");
    expect(cancelled.body.onchain.map((o: any) => o.status)).toEqual(["cancelled", "cancelled"]);
    // Period 1's own signed authorization, submitted directly once its window is open, reverts.
    await chain.advanceClock(DAY + 60);
    const held = schedule[0] as { payload: { signature: Hex; authorization: Record<string, string> } };
    const a = held.payload.authorization;
    const { v, r, s } = parseSignature(held.payload.signature);
    const submitter = createWalletClient({ account: privateKeyToAccount(generatePrivateKey()), transport: http(chain.rpcUrl) });
    await chain.fundGas(submitter.account.address, 10n ** 16n);
    await expect(
      submitter.writeContract({
        address: DEVCHAIN_USDC,
        abi: TestUSDC.abi,
        functionName: "transferWithAuthorization",
        args: [a.from as Hex, a.to as Hex, BigInt(a.value!), BigInt(a.validAfter!), BigInt(a.validBefore!), a.nonce as Hex, Number(v), r, s],
        chain: null,
      }),
    ).rejects.toThrow(/authorization is used or canceled|revert/i);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await chain.balance(buyer.address)).toBe(2n * total);
    expect((await call("GET", `/v1/schedules/${id}`, { key: seller.key })).body).toMatchObject({ status: "cancelled", periods_settled: 1 });
  }, 120_000);
});
