import { encodeHeader, signEscrowDeposit } from "@c402/x402";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { devchainWallets, type DevchainWallets } from "../src/devchain";
import { actOnEscrow } from "../src/escrow";
import { call, newSeller } from "../src/http";

/**
 * The escrow's timed exits end to end (spec, States and transitions:
 * Escrow): the settle window's end releases a held escrow, the hold
 * window's end releases one on hold, and the backstop refunds an escalated
 * one the arbiter did not rule on, each taken once by the escrow service's
 * sweeper, on the chain's clock. This suite moves the local chain's clock
 * forward (evm_increaseTime), so it runs after every other suite of its run
 * (src/sequencer.js: *.clock.test.ts last): every authorization signed for
 * "now" has expired on the chain afterwards.
 */

const HOUR = 3_600;
/** The shortest windows the spec allows: settle and hold an hour, the backstop just over it. */
const WINDOWS = { escrow_settle_window: HOUR, escrow_hold_window: HOUR, escrow_backstop_window: 2 * HOUR };
const FEE_WALLET: Hex = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720";

describe("escrow timed exits (the chain's clock moved forward)", () => {
  let chain: DevchainWallets;
  const arbiter = privateKeyToAccount(generatePrivateKey());

  beforeAll(async () => {
    chain = await devchainWallets(7);
  });

  /** A live escrow sale with the shortest windows, deposited by a fresh buyer. */
  async function heldSale() {
    const seller = await newSeller();
    const created = await call("POST", "/v1/escrow-checkouts", {
      key: seller.key,
      body: { title: "Hand-made chair", price_usd: "1.00", payload: { ships: "tomorrow" }, arbiter_evm: arbiter.address, test_mode: false, ...WINDOWS },
    });
    expect(created.status).toBe(201);
    const checkoutId = created.body.id as string;
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.fund(buyer.address, 1_030_000n);
    const prepared = await call("POST", `/e/${checkoutId}/prepare`, { body: { payer: buyer.address } });
    const stub = prepared.body.payload_stub;
    const payment = await signEscrowDeposit(buyer, {
      requirement: stub.accepted,
      authorization: stub.payload.authorization,
      resourceUrl: stub.resource.url,
      salt: stub.payload.salt,
    });
    // As a client does: a deposit not confirmed in time (202 pending, or 503 with retry_is_safe) is presented again until held.
    let paid = await call("POST", `/e/${checkoutId}/pay`, { headers: { "payment-signature": encodeHeader(payment) } });
    for (let i = 0; i < 20 && paid.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 1_000));
      paid = await call("POST", `/e/${checkoutId}/pay`, { headers: { "payment-signature": encodeHeader(payment) } });
    }
    expect(paid.body).toMatchObject({ escrow: { status: "held" } });
    return { seller, checkoutId, buyer, paymentId: paid.body.escrow.payment_id as string, sellerBefore: await chain.balance(seller.wallet.address) };
  }

  async function act(sale: { checkoutId: string; paymentId: string; buyer: PrivateKeyAccount }, action: string) {
    const { prepared, submitted } = await actOnEscrow(sale.checkoutId, sale.paymentId, action, sale.buyer);
    expect(prepared.status).toBe(200);
    expect(submitted.status).toBe(200);
  }

  /** The seller's view of the escrow once the service has followed the chain to `state` (or the last one seen). */
  async function escrowOnceIn(sale: { seller: { key: string }; paymentId: string }, state: string): Promise<Record<string, any>> {
    let body: Record<string, any> = {};
    for (let i = 0; i < 150; i++) {
      body = (await call("GET", `/v1/escrows/${sale.paymentId}`, { key: sale.seller.key })).body;
      if (body.status === state) return body;
      await new Promise((r) => setTimeout(r, 200));
    }
    return body;
  }

  it("the settle window's end releases a held escrow, the hold window's end one on hold, and the backstop refunds an escalated one; each once, to the unit", async () => {
    // Everything signed first: after the clock moves, nothing signed for "now" is valid on the chain.
    const settles = await heldSale();
    const holds = await heldSale();
    await act(holds, "hold");
    const escalates = await heldSale();
    await act(escalates, "request-refund");
    expect((await escrowOnceIn(holds, "on_hold")).status).toBe("on_hold");
    expect((await escrowOnceIn(escalates, "escalated")).status).toBe("escalated");
    const feeBefore = await chain.balance(FEE_WALLET);

    // An hour on: the settle and hold windows have ended; the backstop (two hours from the escalation) has not.
    await chain.advanceClock(HOUR + 60);
    expect(await escrowOnceIn(settles, "released")).toMatchObject({
      status: "released",
      closed_by: "settle_window",
      close_tx_hash: expect.stringMatching(/^0x/),
    });
    expect(await escrowOnceIn(holds, "released")).toMatchObject({ status: "released", closed_by: "hold_window" });
    expect(await chain.balance(settles.seller.wallet.address)).toBe(settles.sellerBefore + 1_000_000n);
    expect(await chain.balance(holds.seller.wallet.address)).toBe(holds.sellerBefore + 1_000_000n);
    expect(await chain.balance(FEE_WALLET)).toBe(feeBefore + 2n * 30_000n);
    expect((await call("GET", `/v1/escrows/${escalates.paymentId}`, { key: escalates.seller.key })).body.status).toBe("escalated");

    // Another hour on: the arbiter never ruled, so the backstop refunds the buyer everything, the fee too.
    await chain.advanceClock(HOUR + 60);
    expect(await escrowOnceIn(escalates, "refunded")).toMatchObject({ status: "refunded", closed_by: "backstop" });
    expect(await chain.balance(escalates.buyer.address)).toBe(1_030_000n);
    expect(await chain.balance(escalates.seller.wallet.address)).toBe(escalates.sellerBefore);

    // The released ones have their receipts; the refunded one has none. Nothing is taken twice.
    for (const sale of [settles, holds]) {
      let receipt = await call("GET", `/r/${sale.paymentId}`, { headers: { accept: "application/json" } });
      for (let i = 0; i < 100 && receipt.status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 200));
        receipt = await call("GET", `/r/${sale.paymentId}`, { headers: { accept: "application/json" } });
      }
      expect(receipt.body).toMatchObject({ id: sale.paymentId, total: 1_030_000, provider_amount: 1_000_000 });
    }
    expect((await call("GET", `/r/${escalates.paymentId}`)).status).toBe(404);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await chain.balance(FEE_WALLET)).toBe(feeBefore + 2n * 30_000n);
  }, 120_000);
});
