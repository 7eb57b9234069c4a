import { migrate, openPostgres, type ServiceDatabase } from "@c402/db";
import { newId } from "@c402/ids";
import { ProblemError } from "@c402/problems";
import { refuseStellarOrgLookups, startStellarStandin, trustCertificateInThisProcess, type StellarStandin } from "@c402/stellar-standin";
import { describeWith, freshPostgresDatabase } from "@c402/testkit";
import { encodeHeader, STELLAR_NETWORKS, syntheticTxHash, type PaymentRequirements } from "@c402/x402";
import { Address, authorizeEntry, Keypair, Networks, xdr } from "@stellar/stellar-sdk";
import { createEd25519Signer } from "@x402/stellar";
import { ExactStellarScheme } from "@x402/stellar/exact/client";
import { PAYMENTS_SCHEMA, paymentsMigrations } from "../src";
import { Payments } from "../src/domain/payments";
import type { CheckoutForPayment } from "../src/domain/requirements";
import { RehearsalSettlement, type RehearsalSettlementOptions } from "../src/domain/settlement/rehearsal";
import { StellarRehearsal } from "../src/domain/settlement/rehearsal-stellar";

const TESTNET_USDC = STELLAR_NETWORKS["stellar:testnet"].usdc;
const PUBNET_USDC = STELLAR_NETWORKS["stellar:pubnet"].usdc;
const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

/**
 * Stellar rehearsals (ADR 5): the rehearsal face quotes the live Stellar
 * requirement's shape on testnet, which the official client pays unmodified
 * by simulating the transfer through its own RPC (here the stand-in, as
 * testnet); the service verifies it with no chain asked and settles it
 * simulated, once however often it is presented, and never submits it: the
 * stand-in's ledger does not move. Through the purchase flow a face calls.
 */
describeWith("postgres")("Stellar rehearsals (PostgreSQL, Soroban RPC stand-in as the buyer's testnet RPC)", () => {
  let standin: StellarStandin;
  let untrust: () => void;
  let horizon: ReturnType<typeof refuseStellarOrgLookups>;
  let database: ServiceDatabase;
  let dropDatabase: () => Promise<void>;
  let payments: Payments;
  /** The service's Stellar account (its live rail's settlement source). */
  const service = Keypair.random();
  const checkouts = new Map<string, CheckoutForPayment>();
  const PRICE = 250_000n; // $0.25 in the service's 6 decimals; 2,500,000 units of Stellar's 7

  /** A rehearsal settlement for a deployment whose live Stellar rail is `live` (none: no Stellar rail). */
  function rehearsalFor(live?: { network: string; usdcContract: string }, over: Partial<RehearsalSettlementOptions> = {}) {
    const now = () => new Date();
    return new RehearsalSettlement({
      db: database.db,
      subjectSecret: "stellar-rehearsal",
      onCommitted: () => {},
      now,
      ...(live ? { stellar: new StellarRehearsal({ ...live, serviceAccounts: [service.publicKey()] }, now) } : {}),
      ...over,
    });
  }

  beforeAll(async () => {
    standin = await startStellarStandin({ network: "stellar:testnet", ledgerMs: 500 });
    untrust = trustCertificateInThisProcess(standin.caCertificatePem);
    horizon = refuseStellarOrgLookups();
    const postgres = await freshPostgresDatabase();
    dropDatabase = () => postgres.drop();
    database = openPostgres({ url: postgres.url, schema: PAYMENTS_SCHEMA });
    await migrate(database, paymentsMigrations);
    standin.fundAccount(service.publicKey());
    // The deployment settles live on pubnet: its rehearsals are quoted on testnet all the same.
    const rehearsal = rehearsalFor({ network: "stellar:pubnet", usdcContract: PUBNET_USDC });
    payments = new Payments({ db: database.db, checkouts: async (id) => checkoutNamed(id), settlements: [rehearsal] });
  }, 60_000);

  afterAll(async () => {
    horizon?.restore();
    untrust?.();
    await database?.close();
    await dropDatabase?.();
    await standin?.close();
  });

  function checkoutNamed(id: string): CheckoutForPayment {
    const checkout = checkouts.get(id);
    if (!checkout) throw new ProblemError("not-found", "No such checkout.");
    return checkout;
  }

  /** A checkout paying a seller (with a USDC trustline on the stand-in) on Stellar, and a buyer holding 1 USDC there. */
  function sale(over: Partial<CheckoutForPayment> = {}) {
    const buyer = Keypair.random();
    const seller = Keypair.random();
    standin.fundAccount(buyer.publicKey());
    standin.fundAccount(seller.publicKey());
    standin.mintUsdc(buyer.publicKey(), 10_000_000n);
    standin.mintUsdc(seller.publicKey(), 0n);
    const checkout: CheckoutForPayment = {
      id: newId("checkout"),
      accountId: "acc_stellar_r",
      title: "Rehearsed on Stellar",
      priceAtomic: PRICE,
      payTo: "0x2222222222222222222222222222222222222222",
      armed: true,
      reusable: true,
      status: "open",
      payoutAddresses: { stellar: seller.publicKey() },
      ...over,
    };
    checkouts.set(checkout.id, checkout);
    return { buyer, seller, checkout };
  }

  async function stellarRequirement(checkoutId: string): Promise<PaymentRequirements> {
    const { accepts } = await payments.quote(checkoutId, "test");
    const requirement = accepts.find((r) => r.network.startsWith("stellar:"));
    if (!requirement) throw new Error("no Stellar rehearsal requirement quoted");
    return requirement;
  }

  /** The official client's transaction for `signedFor`, simulated through the stand-in (the buyer's own testnet RPC). */
  async function officialTransaction(buyer: Keypair, signedFor: PaymentRequirements): Promise<string> {
    const client = new ExactStellarScheme(createEd25519Signer(buyer.secret(), "stellar:testnet"), { url: standin.url });
    const created = await client.createPaymentPayload(2, signedFor as Parameters<typeof client.createPaymentPayload>[1]);
    return (created.payload as { transaction: string }).transaction;
  }

  const header = (accepted: PaymentRequirements, transaction: string) => encodeHeader({ x402Version: 2, accepted, payload: { transaction } });

  /** The official client's payment for `signedFor`, presented as made for `accepted` (the requirement issued). */
  async function officialHeader(buyer: Keypair, accepted: PaymentRequirements, signedFor: PaymentRequirements = accepted) {
    const transaction = await officialTransaction(buyer, signedFor);
    return { header: header(accepted, transaction), transaction };
  }

  /** The transaction with its call changed (the operation's and the authorized one alike), the payer's entry signed again by `signer` for `passphrase`. */
  async function resigned(
    transaction: string,
    signer: Keypair,
    change: (call: xdr.InvokeContractArgs) => void = () => {},
    passphrase: string = Networks.TESTNET,
  ): Promise<string> {
    const envelope = xdr.TransactionEnvelope.fromXDR(transaction, "base64");
    const invoke = envelope.v1().tx().operations()[0]!.body().invokeHostFunctionOp();
    change(invoke.hostFunction().invokeContract());
    const entry = invoke.auth()[0]!;
    change(entry.rootInvocation().function().contractFn());
    invoke.auth([await authorizeEntry(entry, signer, entry.credentials().address().signatureExpirationLedger(), passphrase)]);
    return envelope.toXDR("base64");
  }

  /** The transaction as `edit` leaves its envelope, nothing signed again. */
  function edited(transaction: string, edit: (envelope: xdr.TransactionEnvelope) => void): string {
    const envelope = xdr.TransactionEnvelope.fromXDR(transaction, "base64");
    edit(envelope);
    return envelope.toXDR("base64");
  }

  const invokeOf = (envelope: xdr.TransactionEnvelope) => envelope.v1().tx().operations()[0]!.body().invokeHostFunctionOp();

  const paymentRows = async (checkoutId: string) =>
    database.db.selectFrom("payments").select(["id", "test_mode", "status"]).where("checkout_id", "=", checkoutId).execute();

  /** What the stand-in's ledger holds of a sale: its transfers and both balances. */
  const ledgerOf = (buyer: Keypair, seller: Keypair) => ({
    transfers: standin.transfers().length,
    buyer: standin.usdcBalance(buyer.publicKey()),
    seller: standin.usdcBalance(seller.publicKey()),
  });

  describe("what the rehearsal face quotes", () => {
    it("the live shape on testnet: testnet USDC, the price in 7 decimals, to the seller's Stellar wallet, fees sponsored, marked a rehearsal", async () => {
      const { checkout, seller } = sale();
      const { accepts, settlement } = await payments.quote(checkout.id, "test");
      expect(settlement).toBe("simulated");
      expect(accepts.map((r) => r.network)).toEqual(["eip155:84532", "stellar:testnet"]);
      expect(accepts[1]).toEqual({
        scheme: "exact",
        network: "stellar:testnet",
        asset: TESTNET_USDC,
        amount: "2500000",
        payTo: seller.publicKey(),
        maxTimeoutSeconds: 300,
        extra: { areFeesSponsored: true, rehearsal: true, checkoutId: checkout.id },
      });
    });

    it("after every other family's rehearsal requirement", async () => {
      const withSolana = rehearsalFor(
        { network: "stellar:testnet", usdcContract: TESTNET_USDC },
        { solana: { network: DEVNET, usdcMint: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU" } },
      );
      const { checkout, seller } = sale();
      const both = { ...checkout, payoutAddresses: { solana: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", stellar: seller.publicKey() } };
      const quoting = new Payments({ db: database.db, checkouts: async () => both, settlements: [withSolana] });
      expect((await quoting.quote(both.id, "test")).accepts.map((r) => r.network)).toEqual(["eip155:84532", DEVNET, "stellar:testnet"]);
    });

    it("testnet whatever the live rail's network: its own USDC contract only when the live rail is on testnet", () => {
      const pubnet = rehearsalFor({ network: "stellar:pubnet", usdcContract: PUBNET_USDC });
      expect(pubnet.rails().map((r) => [r.network, r.asset])).toEqual([
        ["eip155:84532", "0x036CbD53842c5426634e7929541eC2318f3dCF7e"],
        ["stellar:testnet", TESTNET_USDC],
      ]);
      expect(pubnet.settles("stellar:pubnet")).toBe(false);
      expect(pubnet.settles("stellar:testnet")).toBe(true);
      const configured = "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC";
      const testnet = rehearsalFor({ network: "stellar:testnet", usdcContract: configured });
      expect(testnet.rails().map((r) => [r.network, r.asset])[1]).toEqual(["stellar:testnet", configured]);
    });

    it("nothing on Stellar without a Stellar payout wallet or with a platform cut; a relay sale is quoted (as live)", async () => {
      const { checkout: none } = sale({ payoutAddresses: {} });
      expect((await payments.quote(none.id, "test")).accepts.map((r) => r.network)).toEqual(["eip155:84532"]);
      const { checkout: cut } = sale({ platform: { feeBps: 300, feeTo: "0x3333333333333333333333333333333333333333" } });
      expect((await payments.quote(cut.id, "test")).accepts.map((r) => r.network)).toEqual(["eip155:84532"]);
      const relay = { url: "https://origin.example/api", method: "GET", oneOffCredential: false, testDeliveryDailyCap: 100 };
      const { checkout: relayed } = sale({ relay });
      expect((await payments.quote(relayed.id, "test")).accepts.map((r) => r.network)).toEqual(["eip155:84532", "stellar:testnet"]);
    });

    it("a deployment without a Stellar rail mentions Stellar in no rehearsal requirement, whatever wallets the checkout has", async () => {
      const { checkout } = sale();
      const evmOnly = rehearsalFor();
      const withoutStellar = new Payments({ db: database.db, checkouts: async () => checkout, settlements: [evmOnly] });
      const { accepts } = await withoutStellar.quote(checkout.id, "test");
      expect(accepts.map((r) => r.network)).toEqual(["eip155:84532"]);
      expect(JSON.stringify(accepts)).not.toMatch(/stellar|areFeesSponsored/i);
      expect(evmOnly.settles("stellar:testnet")).toBe(false);
    });
  });

  it("the official client's payment settles simulated: a receipt in test mode with a synthetic hash; the stand-in's ledger does not move", async () => {
    const { buyer, seller, checkout } = sale();
    const requirement = await stellarRequirement(checkout.id);
    const { header: paid, transaction } = await officialHeader(buyer, requirement);
    const before = ledgerOf(buyer, seller);
    const r = await payments.submit(checkout.id, "test", paid);
    expect(r.status).toBe("settled");
    expect(r.redelivered).toBe(false);
    expect(r.receipt).toMatchObject({
      test_mode: true,
      status: "settled",
      network: "stellar:testnet",
      asset: TESTNET_USDC,
      payer: buyer.publicKey(),
      pay_to: seller.publicKey(),
      price_atomic: PRICE,
      provider_amount: PRICE,
      fee_amount: 0n,
      total: PRICE,
      raw_tx: null,
      authorization: { transaction },
    });
    // Keyed as live: the payer and its authorization's nonce.
    const nonce = xdr.TransactionEnvelope.fromXDR(transaction, "base64").v1().tx().operations()[0]!.body().invokeHostFunctionOp().auth()[0]!;
    const nonceText = nonce.credentials().address().nonce().toBigInt().toString();
    expect(r.receipt.nonce).toBe(nonceText);
    expect(r.receipt.tx_hash).toBe(syntheticTxHash("stellar:testnet", buyer.publicKey(), nonceText));
    expect(r.settleResponse).toMatchObject({ success: true, network: "stellar:testnet", payer: buyer.publicKey(), transaction: r.receipt.tx_hash });
    expect(ledgerOf(buyer, seller)).toEqual(before);
    expect(before).toMatchObject({ buyer: 10_000_000n, seller: 0n });
  }, 60_000);

  it("the same authorization again redelivers the one receipt: at once, later, or in another envelope; another payment is another receipt", async () => {
    const { buyer, seller, checkout } = sale();
    const requirement = await stellarRequirement(checkout.id);
    const { header: paid, transaction } = await officialHeader(buyer, requirement);
    const results = await Promise.all(Array.from({ length: 10 }, () => payments.submit(checkout.id, "test", paid)));
    const receiptId = results[0]!.receipt.id;
    expect(new Set(results.map((r) => r.receipt.id))).toEqual(new Set([receiptId]));
    expect(results.filter((r) => !r.redelivered)).toHaveLength(1);
    expect(await payments.submit(checkout.id, "test", paid)).toMatchObject({ redelivered: true, receipt: { id: receiptId } });
    // The same signed authorization in an envelope a relayer varied (another fee): the same payment.
    const refeed = edited(transaction, (e) =>
      e
        .v1()
        .tx()
        .fee(e.v1().tx().fee() + 1),
    );
    expect(refeed).not.toBe(transaction);
    expect(await payments.submit(checkout.id, "test", header(requirement, refeed))).toMatchObject({ redelivered: true, receipt: { id: receiptId } });
    // The buyer's next payment (a new nonce) is a new sale.
    const next = await payments.submit(checkout.id, "test", (await officialHeader(buyer, requirement)).header);
    expect(next).toMatchObject({ redelivered: false, status: "settled" });
    expect(next.receipt.id).not.toBe(receiptId);
    expect((await paymentRows(checkout.id)).map((r) => [r.test_mode, r.status])).toEqual([
      [true, "settled"],
      [true, "settled"],
    ]);
    expect(standin.usdcBalance(seller.publicKey())).toBe(0n);
    // Presented at another checkout's test face, it matches nothing issued there.
    const { checkout: other } = sale();
    await expect(payments.submit(other.id, "test", paid)).rejects.toMatchObject({ extensions: { reason: "no_matching_requirements" } });
  }, 60_000);

  describe("refusals: the live reasons, nothing recorded", () => {
    async function expectRefused(checkoutId: string, presented: string, reason: string, face: "test" | "live" = "test") {
      const refused = await payments.submit(checkoutId, face, presented).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ProblemError);
      expect({ slug: (refused as ProblemError).slug, reason: (refused as ProblemError).extensions.reason }).toEqual({ slug: "payment-required", reason });
      expect(await paymentRows(checkoutId)).toEqual([]);
    }

    it("another amount or destination signed by the official client; another asset, by hand", async () => {
      const { buyer, seller, checkout } = sale();
      const issued = await stellarRequirement(checkout.id);
      const before = ledgerOf(buyer, seller);
      await expectRefused(
        checkout.id,
        (await officialHeader(buyer, issued, { ...issued, amount: "2499999" })).header,
        "invalid_exact_stellar_payload_wrong_amount",
      );
      const elsewhere = sale().seller.publicKey();
      await expectRefused(
        checkout.id,
        (await officialHeader(buyer, issued, { ...issued, payTo: elsewhere })).header,
        "invalid_exact_stellar_payload_wrong_recipient",
      );
      // Pubnet's USDC, which no testnet RPC would simulate: the buyer's entry signed again for that call.
      const { transaction } = await officialHeader(buyer, issued);
      const otherAsset = await resigned(transaction, buyer, (call) => call.contractAddress(new Address(PUBNET_USDC).toScAddress()));
      await expectRefused(checkout.id, header(issued, otherAsset), "invalid_exact_stellar_payload_wrong_asset");
      expect(ledgerOf(buyer, seller)).toEqual(before);
    }, 60_000);

    it("a signature changed, by another key, or made for another network", async () => {
      const { buyer, checkout } = sale();
      const issued = await stellarRequirement(checkout.id);
      const { transaction } = await officialHeader(buyer, issued);
      const flipped = edited(transaction, (e) => {
        const fields = invokeOf(e).auth()[0]!.credentials().address().signature().vec()![0]!.map()!;
        const signature = fields
          .find((f) => f.key().sym().toString() === "signature")!
          .val()
          .bytes();
        signature[7] = signature[7]! ^ 1;
      });
      await expectRefused(checkout.id, header(issued, flipped), "invalid_exact_stellar_payload_signature_invalid");
      await expectRefused(checkout.id, header(issued, await resigned(transaction, Keypair.random())), "invalid_exact_stellar_payload_signature_invalid");
      // Signed for pubnet: a signature over another network's id, which no testnet entry verifies.
      const pubnet = await resigned(transaction, buyer, () => {}, Networks.PUBLIC);
      await expectRefused(checkout.id, header(issued, pubnet), "invalid_exact_stellar_payload_signature_invalid");
      // The untouched payment still settles (the refusals recorded nothing).
      await expect(payments.submit(checkout.id, "test", header(issued, transaction))).resolves.toMatchObject({ status: "settled", redelivered: false });
    }, 60_000);

    it("the service's own account as the payer, or as the payee", async () => {
      const { buyer, checkout } = sale();
      standin.mintUsdc(service.publicKey(), 10_000_000n);
      const issued = await stellarRequirement(checkout.id);
      await expectRefused(checkout.id, (await officialHeader(service, issued)).header, "invalid_exact_stellar_payload_facilitator_is_payer");
      const { checkout: toService } = sale({ payoutAddresses: { stellar: service.publicKey() } });
      const paysService = await stellarRequirement(toService.id);
      expect(paysService.payTo).toBe(service.publicKey());
      await expectRefused(toService.id, (await officialHeader(buyer, paysService)).header, "invalid_exact_stellar_payload_facilitator_in_footprint");
    }, 60_000);

    it("a recorded authorization with its transfer changed afterwards answers no receipt", async () => {
      const { buyer, checkout } = sale();
      const issued = await stellarRequirement(checkout.id);
      const { header: paid, transaction } = await officialHeader(buyer, issued);
      const settled = await payments.submit(checkout.id, "test", paid);
      // The operation now moves 1 unit; the payer's signed entry (and so the key) is the recorded one's.
      const cheaper = edited(transaction, (e) => {
        invokeOf(e).hostFunction().invokeContract().args()[2] = xdr.ScVal.scvI128(
          new xdr.Int128Parts({ hi: xdr.Int64.fromString("0"), lo: xdr.Uint64.fromString("1") }),
        );
      });
      const refused = await payments.submit(checkout.id, "test", header(issued, cheaper)).catch((err: unknown) => err);
      expect((refused as ProblemError).extensions.reason).toBe("invalid_exact_stellar_payload_signature_invalid");
      expect((await paymentRows(checkout.id)).map((r) => r.id)).toEqual([settled.receipt.id]);
    }, 60_000);

    it("a rehearsal payment at the armed live face is refused as one", async () => {
      const { buyer, checkout } = sale();
      const { header: paid } = await officialHeader(buyer, await stellarRequirement(checkout.id));
      await expectRefused(checkout.id, paid, "rehearsal_payment_on_live_face", "live");
    }, 60_000);
  });
});
