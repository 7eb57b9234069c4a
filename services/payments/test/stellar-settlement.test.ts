import { migrate, openPostgres, sql, type ServiceDatabase } from "@c402/db";
import { newId } from "@c402/ids";
import { StellarChain } from "@c402/stellar-chain";
import { refuseStellarOrgLookups, startStellarStandin, trustCertificateInThisProcess, type StellarStandin } from "@c402/stellar-standin";
import { describeWith, freshPostgresDatabase } from "@c402/testkit";
import type { AnyPaymentPayload, PaymentRequirements } from "@c402/x402";
import { Keypair } from "@stellar/stellar-sdk";
import { createEd25519Signer } from "@x402/stellar";
import { ExactStellarScheme } from "@x402/stellar/exact/client";
import { PAYMENTS_SCHEMA, paymentsMigrations } from "../src";
import { requirementsFor, type CheckoutForPayment } from "../src/domain/requirements";
import { LiveStellarSettlement, stellarPresentedPayment, type LiveStellarSettlementOptions } from "../src/domain/settlement/live-stellar";
import { paymentsStore } from "../src/store/payments-store";

/**
 * The Stellar rail's saga against the Soroban RPC stand-in (no Stellar
 * network runs here; packages/stellar-standin says what it models): the
 * official @x402/stellar client signs, the settlement records, settles and
 * answers duplicates with the recorded outcome.
 */
describeWith("postgres")("Stellar live settlement (PostgreSQL, Soroban RPC stand-in)", () => {
  let standin: StellarStandin;
  let untrust: () => void;
  let horizon: ReturnType<typeof refuseStellarOrgLookups>;
  let database: ServiceDatabase;
  let dropDatabase: () => Promise<void>;
  let chain: StellarChain;
  let saga: LiveStellarSettlement;
  let sagaOptions: LiveStellarSettlementOptions;
  let service: Keypair;
  const PRICE = 250_000n; // $0.25 in the service's 6 decimals; 2,500,000 units of Stellar's 7

  beforeAll(async () => {
    standin = await startStellarStandin({ ledgerMs: 500 });
    untrust = trustCertificateInThisProcess(standin.caCertificatePem);
    horizon = refuseStellarOrgLookups();
    const postgres = await freshPostgresDatabase();
    dropDatabase = () => postgres.drop();
    database = openPostgres({ url: postgres.url, schema: PAYMENTS_SCHEMA });
    await migrate(database, paymentsMigrations);
    service = Keypair.random();
    standin.fundAccount(service.publicKey());
    chain = new StellarChain({
      network: standin.network,
      rpcUrl: standin.url,
      usdcContract: standin.usdc,
      accountSecret: service.secret(),
      caCertificatePem: standin.caCertificatePem,
      pollIntervalMs: 200,
    });
    sagaOptions = {
      db: database.db,
      chains: new Map([[chain.network, chain]]),
      subjectSecret: "stellar-settlement",
      settleTimeoutMs: 15_000,
      onCommitted: () => {},
      now: () => new Date(),
    };
    saga = new LiveStellarSettlement(sagaOptions);
  }, 60_000);

  afterAll(async () => {
    horizon?.restore();
    untrust?.();
    await database?.close();
    await dropDatabase?.();
    await standin?.close();
  });

  /** A funded buyer, a seller with a USDC balance entry, and a checkout paying the seller on Stellar. */
  function sale(over: Partial<CheckoutForPayment> = {}, buyerUsdc = 10_000_000n) {
    const buyer = Keypair.random();
    const seller = Keypair.random();
    standin.fundAccount(buyer.publicKey());
    standin.fundAccount(seller.publicKey());
    standin.mintUsdc(buyer.publicKey(), buyerUsdc);
    standin.mintUsdc(seller.publicKey(), 0n);
    const checkout: CheckoutForPayment = {
      id: newId("checkout"),
      accountId: "acc_stellar",
      title: "Stellar goods",
      priceAtomic: PRICE,
      payTo: "0x2222222222222222222222222222222222222222",
      armed: true,
      reusable: true,
      status: "open",
      payoutAddresses: { stellar: seller.publicKey() },
      ...over,
    };
    const requirement = requirementsFor("live", checkout, saga.rails()).find((r) => r.network === standin.network);
    if (!requirement) throw new Error("no Stellar requirement quoted");
    return { buyer, seller, checkout, requirement };
  }

  /** What the official client sends for `requirement` (signed for `signedFor` when the buyer was shown another). */
  async function pay(buyer: Keypair, requirement: PaymentRequirements, signedFor: PaymentRequirements = requirement): Promise<AnyPaymentPayload> {
    const client = new ExactStellarScheme(createEd25519Signer(buyer.secret(), "stellar:testnet"), { url: standin.url });
    const created = await client.createPaymentPayload(2, signedFor as Parameters<typeof client.createPaymentPayload>[1]);
    return { ...created, accepted: requirement, resource: { url: "http://127.0.0.1/c/x", description: "", mimeType: "" } } as unknown as AnyPaymentPayload;
  }

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
