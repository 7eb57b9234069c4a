import { sql } from "@c402/db";
import type { StellarChain } from "@c402/stellar-chain";
import { describeWith } from "@c402/testkit";
import type { AnyPaymentPayload, PaymentRequirements } from "@c402/x402";
import type { Keypair } from "@stellar/stellar-sdk";
import { requirementsFor, type CheckoutForPayment } from "../src/domain/requirements";
import { LiveStellarSettlement, stellarPresentedPayment } from "../src/domain/settlement/live-stellar";
import { paymentsStore } from "../src/store/payments-store";
import { paymentRecords } from "./support/rail-saga";
import { officialStellarPayment, openStellarRig, stellarSale, type StellarRig } from "./support/stellar-saga";

/**
 * The Stellar rail's saga against the Soroban RPC stand-in (no Stellar
 * network runs here; packages/stellar-standin says what it models): the
 * official @x402/stellar client signs, the settlement records, settles and
 * answers duplicates with the recorded outcome.
 */
describeWith("postgres")("Stellar live settlement (PostgreSQL, Soroban RPC stand-in)", () => {
  let rig: StellarRig;
  let standin: StellarRig["standin"];
  let database: StellarRig["database"];
  let chain: StellarChain;
  let saga: LiveStellarSettlement;
  let sagaOptions: StellarRig["options"];
  const PRICE = 250_000n; // $0.25 in the service's 6 decimals; 2,500,000 units of Stellar's 7

  beforeAll(async () => {
    rig = await openStellarRig("stellar-settlement", { ledgerMs: 500 });
    ({ standin, database, chain, saga, options: sagaOptions } = rig);
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  const sale = (over: Partial<CheckoutForPayment> = {}, buyerUsdc = 10_000_000n) => stellarSale(rig, { priceAtomic: PRICE, ...over }, buyerUsdc);
  const pay = (buyer: Keypair, requirement: PaymentRequirements, signedFor: PaymentRequirements = requirement) =>
    officialStellarPayment(rig, buyer, requirement, signedFor);

  it("quotes the seller's Stellar wallet in the token's 7 decimals, fees sponsored, and no Stellar requirement for a checkout with a platform cut", () => {
    const { seller, requirement } = sale();
    expect(requirement).toMatchObject({
      scheme: "exact",
      network: "stellar:testnet",
      asset: standin.usdc,
      amount: "2500000",
      payTo: seller.publicKey(),
      extra: { areFeesSponsored: true },
    });
    // One transfer cannot carry a cut: with only the Stellar rail, nothing can sell the checkout.
    const withCut = { ...sale().checkout, platform: { feeBps: 500, feeTo: "0x3333333333333333333333333333333333333333" } };
    expect(() => requirementsFor("live", withCut, saga.rails())).toThrow("No settleable network");
  });

  it("settles the official client's payment once: exact balances, one transfer, the receipt in 6 decimals, the event in the outbox", async () => {
    const { buyer, seller, checkout, requirement } = sale();
    const payload = await pay(buyer, requirement);
    const transfersBefore = standin.transfers().length;
    const outcome = await saga.submit(checkout, payload, requirement);
    expect(outcome.kind).toBe("settled");
    if (outcome.kind !== "settled") return;
    expect(standin.usdcBalance(seller.publicKey())).toBe(2_500_000n);
    expect(standin.usdcBalance(buyer.publicKey())).toBe(7_500_000n);
    const transfers = standin.transfers().slice(transfersBefore);
    expect(transfers).toEqual([expect.objectContaining({ from: buyer.publicKey(), to: seller.publicKey(), amount: 2_500_000n })]);
    expect(outcome.row).toMatchObject({
      status: "settled",
      network: "stellar:testnet",
      payer: buyer.publicKey(),
      pay_to: seller.publicKey(),
      tx_hash: transfers[0]!.hash,
      provider_amount: PRICE,
      fee_amount: 0n,
      total: PRICE,
    });
    const events = await sql<{ n: string }>`select count(*)::text as n from ${sql.table("outbox")} where key = ${outcome.row.id}`.execute(database.db);
    expect(events.rows[0]!.n).toBe("1");
    // Presented again: the recorded outcome, nothing sent.
    const again = await saga.submit(checkout, payload, requirement);
    expect(again).toMatchObject({ kind: "settled", redelivered: true, row: { id: outcome.row.id } });
    expect(standin.transfers().length).toBe(transfersBefore + 1);
  }, 60_000);

  it("the same payment presented 10 times at once settles once, and every copy answers the one receipt", async () => {
    const { buyer, seller, checkout, requirement } = sale();
    const payload = await pay(buyer, requirement);
    const transfersBefore = standin.transfers().length;
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => saga.submit(checkout, payload, requirement)));
    const ids = new Set(outcomes.map((o) => o.row.id));
    expect(ids.size).toBe(1);
    expect(outcomes.every((o) => o.kind === "settled")).toBe(true);
    expect(standin.transfers().length).toBe(transfersBefore + 1);
    expect(standin.usdcBalance(seller.publicKey())).toBe(2_500_000n);
  }, 60_000);

  it("refuses a payment signed for another amount or another seller before recording anything", async () => {
    const { buyer, checkout, requirement } = sale();
    for (const [signedFor, reason] of [
      [{ ...requirement, amount: "2499999" }, "invalid_exact_stellar_payload_wrong_amount"],
      [{ ...requirement, payTo: sale().seller.publicKey() }, "invalid_exact_stellar_payload_wrong_recipient"],
    ] as const) {
      const payload = await pay(buyer, requirement, signedFor);
      await expect(saga.submit(checkout, payload, requirement)).rejects.toMatchObject({ extensions: { reason } });
    }
    const rows = await sql<{ n: string }>`select count(*)::text as n from ${sql.table("payments")} where checkout_id = ${checkout.id}`.execute(database.db);
    expect(rows.rows[0]!.n).toBe("0");
  }, 60_000);

  it("a second payment the buyer can no longer cover is refused with nothing recorded and nothing moved", async () => {
    // 3,000,000 units: both payments simulate when signed, but only one sale of 2,500,000 can move.
    const { buyer, seller, checkout, requirement } = sale({}, 3_000_000n);
    const first = await pay(buyer, requirement);
    const second = await pay(buyer, requirement);
    await expect(saga.submit(checkout, first, requirement)).resolves.toMatchObject({ kind: "settled" });
    await expect(saga.submit(checkout, second, requirement)).rejects.toMatchObject({
      extensions: { reason: "invalid_exact_stellar_payload_simulation_failed" },
    });
    expect(standin.usdcBalance(seller.publicKey())).toBe(2_500_000n);
    const rows = await sql<{ n: string }>`select count(*)::text as n from ${sql.table("payments")} where checkout_id = ${checkout.id}`.execute(database.db);
    expect(rows.rows[0]!.n).toBe("1");
  }, 60_000);

  it("a settlement that lands and fails on the network answers its failure, not pending: failed, nothing charged, no receipt, no event; the sweep sends nothing again", async () => {
    const { buyer, seller, checkout, requirement } = sale();
    const payload = await pay(buyer, requirement);
    const { rowsOf, outboxEventsOf } = paymentRecords(database);
    const transfersBefore = standin.transfers().length;
    const sequenceBefore = standin.sequenceNumber(rig.service)!;
    const xlmBefore = standin.xlmBalance(rig.service)!;
    // The settlement's call traps when it applies (as a transfer trapping on the network): its fee is taken, nothing moves.
    standin.failNextTransaction(rig.service);
    await expect(saga.submit(checkout, payload, requirement)).rejects.toMatchObject({
      message: expect.stringMatching(/failed on the network .*txFailed/),
      extensions: { reason: "settlement_failed", settlement: { transaction: expect.stringMatching(/^[0-9a-f]{64}$/), payer: buyer.publicKey() } },
    });
    const rows = await rowsOf(checkout.id);
    expect(rows).toMatchObject([{ status: "failed", failure_reason: "settlement_failed", tx_hash: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect((await paymentsStore.findById(database.db, rows[0]!.id))?.settled_at).toBeNull();
    expect(await outboxEventsOf(rows[0]!.id)).toBe(0);
    // One transaction, landed and failed: the service paid its fee, and the buyer's authorization is still unused.
    const failedFee = xlmBefore - standin.xlmBalance(rig.service)!;
    expect(failedFee).toBeGreaterThan(0n);
    const unchanged = () => ({
      transfers: standin.transfers().length - transfersBefore,
      buyer: standin.usdcBalance(buyer.publicKey()),
      seller: standin.usdcBalance(seller.publicKey()),
      serviceTransactions: standin.sequenceNumber(rig.service)! - sequenceBefore,
      serviceFees: xlmBefore - standin.xlmBalance(rig.service)!,
    });
    const expected = { transfers: 0, buyer: 10_000_000n, seller: 0n, serviceTransactions: 1n, serviceFees: failedFee };
    expect(unchanged()).toEqual(expected);
    // Neither the sweep nor the payment presented again sends it, or a new transaction, again (one would land at the next ledger).
    await saga.sweep(0);
    await expect(saga.submit(checkout, payload, requirement)).rejects.toMatchObject({ extensions: { reason: "settlement_failed" } });
    standin.closeLedger();
    expect(unchanged()).toEqual(expected);
    expect(await rowsOf(checkout.id)).toMatchObject([{ status: "failed", tx_hash: rows[0]!.tx_hash }]);
  }, 60_000);

  it("the sweep settles a payment a crash left claimed (recorded, nothing signed): one transfer, the receipt", async () => {
    const { buyer, seller, checkout, requirement } = sale();
    const payload = await pay(buyer, requirement);
    const claimed = await new ClaimOnly(sagaOptions).claimed(chain, checkout, payload, requirement);
    expect(claimed.status).toBe("claimed");
    const transfersBefore = standin.transfers().length;
    await saga.sweep(0);
    const row = await paymentsStore.findById(database.db, claimed.id);
    expect(row).toMatchObject({ status: "settled", tx_hash: standin.transfers().at(-1)!.hash });
    expect(standin.transfers().length).toBe(transfersBefore + 1);
    expect(standin.usdcBalance(seller.publicKey())).toBe(2_500_000n);
  }, 60_000);
});

/** The saga stopped right after its claim, as a crash there leaves a payment: recorded, nothing signed. */
class ClaimOnly extends LiveStellarSettlement {
  async claimed(chain: StellarChain, checkout: CheckoutForPayment, payload: AnyPaymentPayload, requirement: PaymentRequirements) {
    const payment = chain.decode((payload.payload as { transaction: string }).transaction);
    const claim = await this.claim(checkout, stellarPresentedPayment(checkout, requirement, payment), {});
    if (!("claimed" in claim)) throw new Error("already recorded");
    return claim.claimed;
  }
}
