import { ProblemError } from "@c402/problems";
import type { SolanaDevnet } from "@c402/solana-devnet";
import { describeWith } from "@c402/testkit";
import { encodeHeader, type PaymentRequirements } from "@c402/x402";
import {
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  partiallySignTransaction,
  type KeyPairSigner,
} from "@solana/kit";
import { toClientSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { Payments } from "../src/domain/payments";
import type { CheckoutForPayment } from "../src/domain/requirements";
import { openSvmRig, payableSolanaWallet, solanaSellingCheckout, type SvmRig } from "./support/svm-saga";

/**
 * A platform's cut on Solana (ADR 16): the official client signs one
 * transfer, so a checkout with a cut is not listed on Solana; POST …/prepare
 * answers a transaction of two transfers (the seller's share to the seller,
 * the cut to the platform's Solana wallet) that the buyer's wallet signs, and
 * the face settles it like any Solana payment: the cut reaches the platform
 * on-chain in the buyer's own transaction, never through the service.
 */
describeWith("postgres")("a platform cut on Solana: the prepared two-transfer payment (PostgreSQL, Solana devnet)", () => {
  let rig: SvmRig;
  let devnet: SolanaDevnet;
  let payments: Payments;
  const checkouts = new Map<string, CheckoutForPayment>();
  const PRICE = 1_000_000n;
  const CUT_BPS = 1_500;

  beforeAll(async () => {
    rig = await openSvmRig("svm-split");
    devnet = rig.devnet;
    const source = async (id: string) => {
      const c = checkouts.get(id);
      if (!c) throw new ProblemError("not-found", "No such checkout.");
      return c;
    };
    payments = new Payments({ db: rig.database.db, checkouts: source, settlements: [rig.saga] });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  async function cutCheckout(over: Partial<CheckoutForPayment> = {}) {
    const platform = await payableSolanaWallet(devnet);
    const { checkout, seller } = await solanaSellingCheckout(devnet, {
      accountId: "acc_split",
      priceAtomic: PRICE,
      platform: { feeBps: CUT_BPS, feeTo: "0x5555555555555555555555555555555555555555", feeToSolana: platform },
      soldBy: "acc_platform",
      ...over,
    });
    checkouts.set(checkout.id, checkout);
    return { checkout, seller, platform };
  }

  async function fundedBuyer(): Promise<KeyPairSigner> {
    const buyer = await generateKeyPairSigner();
    await devnet.setTokenBalance(buyer.address, 5_000_000n);
    return buyer;
  }

  /** The prepared transaction signed by the buyer's wallet (its own slot only), as the PAYMENT-SIGNATURE of the prepared requirement. */
  async function signedHeader(buyer: KeyPairSigner, prepared: { requirement: PaymentRequirements; transaction?: string }, accepted = prepared.requirement) {
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(prepared.transaction as string));
    const signed = await partiallySignTransaction([buyer.keyPair], tx as Parameters<typeof partiallySignTransaction>[1]);
    return encodeHeader({ x402Version: 2, accepted, payload: { transaction: getBase64EncodedWireTransaction(signed) } });
  }

  it("lists no Solana requirement for a checkout with a cut; /prepare answers the two transfers, seller's share then the cut", async () => {
    const { checkout, seller, platform } = await cutCheckout();
    await expect(payments.quote(checkout.id, "live")).rejects.toMatchObject({ slug: "unavailable" });
    const buyer = await fundedBuyer();
    const prepared = await payments.prepare(checkout.id, "live", { payer: buyer.address, network: devnet.network });
    expect(prepared.network).toBe(devnet.network);
    expect(prepared.requirement).toEqual({
      scheme: "exact",
      network: devnet.network,
      asset: devnet.usdcMint,
      amount: "1000000",
      payTo: seller,
      maxTimeoutSeconds: 300,
      extra: {
        feePayer: rig.feePayer,
        checkoutId: checkout.id,
        transfers: [
          { payTo: seller, amount: "850000" },
          { payTo: platform, amount: "150000" },
        ],
      },
    });
    expect(prepared.transaction).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(prepared.authorization).toBeUndefined();
    // Two preparations, two messages (each its own memo nonce).
    const again = await payments.prepare(checkout.id, "live", { payer: buyer.address, network: devnet.network });
    expect(again.transaction).not.toBe(prepared.transaction);
  });

  it("the buyer's signed transaction settles once: the seller and the platform paid on-chain exactly, the receipt says what moved", async () => {
    const { checkout, seller, platform } = await cutCheckout();
    const buyer = await fundedBuyer();
    const prepared = await payments.prepare(checkout.id, "live", { payer: buyer.address, network: devnet.network });
    const header = await signedHeader(buyer, prepared);
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => payments.submit(checkout.id, "live", header)));
    expect(outcomes.map((o) => o.status)).toEqual(Array(5).fill("settled"));
    expect(new Set(outcomes.map((o) => o.receipt.id)).size).toBe(1);
    expect(outcomes.filter((o) => !o.redelivered)).toHaveLength(1);
    expect(outcomes[0]!.receipt).toMatchObject({
      network: devnet.network,
      pay_to: seller,
      platform_fee_to: platform,
      provider_amount: 850_000n,
      platform_amount: 150_000n,
      fee_amount: 0n,
      total: 1_000_000n,
      payer: buyer.address,
    });
    expect(await devnet.tokenBalance(seller as never)).toBe(850_000n);
    expect(await devnet.tokenBalance(platform as never)).toBe(150_000n);
    expect(await devnet.tokenBalance(buyer.address)).toBe(4_000_000n);
  });

  it("refuses before anything moves: a transaction paying everything to the seller, and transfers the service did not issue", async () => {
    const { checkout, seller, platform } = await cutCheckout();
    const buyer = await fundedBuyer();
    const prepared = await payments.prepare(checkout.id, "live", { payer: buyer.address, network: devnet.network });
    // The official client's one transfer of the whole price to payTo, presented as the prepared payment.
    const client = new ExactSvmScheme(toClientSvmSigner(buyer), { rpcUrl: devnet.url });
    const oneTransfer = await client.createPaymentPayload(2, prepared.requirement as Parameters<ExactSvmScheme["createPaymentPayload"]>[1]);
    const allToSeller = encodeHeader({ x402Version: 2, accepted: prepared.requirement, payload: oneTransfer.payload });
    await expect(payments.submit(checkout.id, "live", allToSeller)).rejects.toMatchObject({
      extensions: { reason: "invalid_exact_svm_payload_amount_mismatch" },
    });
    // The prepared transaction, claimed for transfers the service never issued (no cut): no such requirement.
    const forged = { ...prepared.requirement, extra: { ...prepared.requirement.extra, transfers: [{ payTo: seller, amount: "1000000" }] } };
    await expect(payments.submit(checkout.id, "live", await signedHeader(buyer, prepared, forged))).rejects.toMatchObject({
      extensions: { reason: "no_matching_requirements" },
    });
    expect(await devnet.tokenBalance(seller as never)).toBe(0n);
    expect(await devnet.tokenBalance(platform as never)).toBe(0n);
    expect(await devnet.tokenBalance(buyer.address)).toBe(5_000_000n);
  });

  it("prepares the listed one-transfer payment where there is no cut, and refuses a payer that is not a Solana wallet", async () => {
    const { checkout, seller } = await cutCheckout({ platform: undefined, soldBy: undefined });
    const buyer = await fundedBuyer();
    const prepared = await payments.prepare(checkout.id, "live", { payer: buyer.address, network: devnet.network });
    expect(prepared.requirement).toMatchObject({ payTo: seller, amount: "1000000", extra: { feePayer: rig.feePayer, checkoutId: checkout.id } });
    expect(prepared.requirement.extra.transfers).toBeUndefined();
    const outcome = await payments.submit(checkout.id, "live", await signedHeader(buyer, prepared));
    expect(outcome.receipt).toMatchObject({ provider_amount: 1_000_000n, platform_amount: null, platform_fee_to: null, total: 1_000_000n });
    expect(await devnet.tokenBalance(seller as never)).toBe(1_000_000n);

    for (const payer of ["0x1111111111111111111111111111111111111111", "not-an-address", rig.feePayer]) {
      await expect(payments.prepare(checkout.id, "live", { payer, network: devnet.network })).rejects.toMatchObject({ slug: "invalid-request" });
    }
  });
});
