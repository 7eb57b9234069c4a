import { ProblemError } from "@c402/problems";
import type { SolanaDevnet } from "@c402/solana-devnet";
import { REHEARSAL_FEE_PAYER } from "@c402/svm-chain";
import { describeWith } from "@c402/testkit";
import { encodeHeader, type PaymentRequirements } from "@c402/x402";
import {
  getAddressEncoder,
  getBase64Encoder,
  generateKeyPairSigner,
  getTransactionDecoder,
  getTransactionEncoder,
  signBytes,
  type Address,
  type KeyPairSigner,
  type SignatureBytes,
} from "@solana/kit";
import { toClientSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { Payments } from "../src/domain/payments";
import type { CheckoutForPayment } from "../src/domain/requirements";
import { RehearsalSettlement } from "../src/domain/settlement/rehearsal";
import { openSvmRig, solanaSellingCheckout, type SvmRig } from "./support/svm-saga";

/**
 * Solana rehearsals (ADR 5): the rehearsal face quotes the live Solana
 * requirement's shape with a fee payer no key exists for; the official client
 * pays it unmodified; it settles simulated (no chain asked, nothing moves),
 * once however often it is presented, and the buyer's transaction can never
 * land. On the local devnet beside the live Solana settlement, through the
 * purchase flow a face calls.
 */
describeWith("postgres")("Solana rehearsals (PostgreSQL, Solana devnet)", () => {
  let rig: SvmRig;
  let devnet: SolanaDevnet;
  let payments: Payments;
  const checkouts = new Map<string, CheckoutForPayment>();

  beforeAll(async () => {
    rig = await openSvmRig("svm-rehearsal");
    devnet = rig.devnet;
    const rehearsal = new RehearsalSettlement({
      db: rig.database.db,
      subjectSecret: "svm-rehearsal",
      onCommitted: () => {},
      now: () => new Date(),
      solana: { network: devnet.network, usdcMint: devnet.usdcMint },
    });
    const source = async (id: string) => {
      const c = checkouts.get(id);
      if (!c) throw new ProblemError("not-found", "No such checkout.");
      return c;
    };
    payments = new Payments({ db: rig.database.db, checkouts: source, settlements: [rehearsal, rig.saga] });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  async function solanaCheckout(over: Partial<CheckoutForPayment> = {}) {
    const made = await solanaSellingCheckout(devnet, { accountId: "acc_r", title: "Rehearsed", ...over });
    checkouts.set(made.checkout.id, made.checkout);
    return made;
  }

  async function fundedBuyer(): Promise<KeyPairSigner> {
    const buyer = await generateKeyPairSigner();
    await devnet.setTokenBalance(buyer.address, 1_000_000n);
    return buyer;
  }

  async function solanaRequirement(checkoutId: string): Promise<PaymentRequirements> {
    const { accepts } = await payments.quote(checkoutId, "test");
    return accepts.find((r) => r.network === devnet.network) as PaymentRequirements;
  }

  /** The official client's payment for `signed`, presented as made for `accepted` (the requirement issued). */
  async function officialHeader(buyer: KeyPairSigner, accepted: PaymentRequirements, signed: PaymentRequirements = accepted) {
    const client = new ExactSvmScheme(toClientSvmSigner(buyer), { rpcUrl: devnet.url });
    const created = await client.createPaymentPayload(2, signed as Parameters<ExactSvmScheme["createPaymentPayload"]>[1]);
    return {
      header: encodeHeader({ x402Version: 2, accepted, payload: created.payload }),
      transaction: (created.payload as { transaction: string }).transaction,
    };
  }

  /** The transaction with one account of its message replaced and signed again by the buyer: a payment its buyer really signed, for something else. */
  async function resigned(buyer: KeyPairSigner, transaction: string, from: string, to: string): Promise<string> {
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
    const message = Buffer.from(tx.messageBytes);
    const [fromBytes, toBytes] = [from, to].map((a) => Buffer.from(getAddressEncoder().encode(a as Address)));
    const at = message.indexOf(fromBytes as Buffer);
    expect(at).toBeGreaterThan(0);
    toBytes!.copy(message, at);
    const signature = (await signBytes(buyer.keyPair.privateKey, message)) as SignatureBytes;
    const wire = getTransactionEncoder().encode({ messageBytes: message as never, signatures: { ...tx.signatures, [buyer.address]: signature } });
    return Buffer.from(wire).toString("base64");
  }

  const paymentRows = async (checkoutId: string) =>
    rig.database.db.selectFrom("payments").select(["id", "test_mode", "status"]).where("checkout_id", "=", checkoutId).execute();

  it("quotes a Solana rehearsal requirement on the test face: the live shape, the rehearsal fee payer; EVM first", async () => {
    const { checkout, seller } = await solanaCheckout();
    const { accepts, settlement } = await payments.quote(checkout.id, "test");
    expect(settlement).toBe("simulated");
    expect(accepts.map((r) => r.network)).toEqual(["eip155:84532", devnet.network]);
    expect(accepts[1]).toEqual({
      scheme: "exact",
      network: devnet.network,
      asset: devnet.usdcMint,
      amount: "300000",
      payTo: seller,
      maxTimeoutSeconds: 300,
      extra: { feePayer: REHEARSAL_FEE_PAYER, rehearsal: true, checkoutId: checkout.id },
    });
    // The live face of the armed checkout quotes the service's fee payer, never the rehearsal's.
    const live = (await payments.quote(checkout.id, "live")).accepts.find((r) => r.network === devnet.network);
    expect(live?.extra).toEqual({ feePayer: rig.feePayer, checkoutId: checkout.id });
  });

  it("prepares no Solana rehearsal (the SVM client signs it as issued), and a live Solana payment only for a Solana payer; never a 5xx", async () => {
    const { checkout } = await solanaCheckout();
    const payer = "0x2222222222222222222222222222222222222222";
    const rehearsal = await payments.prepare(checkout.id, "test", { payer, network: devnet.network }).catch((err: unknown) => err);
    expect(rehearsal).toBeInstanceOf(ProblemError);
    expect((rehearsal as ProblemError).slug).toBe("invalid-request");
    expect((rehearsal as ProblemError).errors).toEqual([
      { field: "network", reason: expect.stringMatching(/; this face's Solana requirement is signed as issued by an x402 SVM client, not prepared$/) },
    ]);
    // The live face prepares Solana transactions (ADR 16), for a Solana payer only.
    const live = await payments.prepare(checkout.id, "live", { payer, network: devnet.network }).catch((err: unknown) => err);
    expect((live as ProblemError).errors).toEqual([{ field: "payer", reason: expect.stringMatching(/Solana address/) }]);
    expect((await payments.prepare(checkout.id, "test", { payer, network: "eip155:84532" })).requirement.extra.rehearsal).toBe(true);
  });

  it("is not offered without a Solana wallet, nor with a platform cut (as live)", async () => {
    const { checkout: none } = await solanaCheckout({ payoutAddresses: {} });
    expect((await payments.quote(none.id, "test")).accepts.map((r) => r.network)).toEqual(["eip155:84532"]);
    const { checkout: cut } = await solanaCheckout({ platform: { feeBps: 300, feeTo: "0x3333333333333333333333333333333333333333" } });
    expect((await payments.quote(cut.id, "test")).accepts.map((r) => r.network)).toEqual(["eip155:84532"]);
  });

  it("a deployment settling Solana mainnet rehearses on the devnet with its USDC (the test face lists testnets only)", () => {
    const mainnet = new RehearsalSettlement({
      db: rig.database.db,
      subjectSecret: "svm-rehearsal",
      onCommitted: () => {},
      now: () => new Date(),
      solana: { network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", usdcMint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" },
    });
    expect(mainnet.rails().map((r) => [r.network, r.asset])).toEqual([
      ["eip155:84532", "0x036CbD53842c5426634e7929541eC2318f3dCF7e"],
      ["solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"],
    ]);
    expect(mainnet.settles("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp")).toBe(false);
  });

  it("a deployment without Solana (SOLANA_ENABLED=false) rehearses on EVM only, whatever wallets the checkout has", async () => {
    const { checkout } = await solanaCheckout();
    const evmOnly = new RehearsalSettlement({ db: rig.database.db, subjectSecret: "svm-rehearsal", onCommitted: () => {}, now: () => new Date() });
    const withoutSolana = new Payments({ db: rig.database.db, checkouts: async () => checkout, settlements: [evmOnly] });
    const { accepts } = await withoutSolana.quote(checkout.id, "test");
    expect(accepts.map((r) => r.network)).toEqual(["eip155:84532"]);
    expect(JSON.stringify(accepts)).not.toMatch(/solana|feePayer/i);
    expect(evmOnly.settles(devnet.network)).toBe(false);
  });

  it("the official client's payment settles simulated: a receipt in test mode with a synthetic hash; no USDC moves", async () => {
    const { checkout, seller } = await solanaCheckout();
    const buyer = await fundedBuyer();
    const { header } = await officialHeader(buyer, await solanaRequirement(checkout.id));
    const r = await payments.submit(checkout.id, "test", header);
    expect(r.status).toBe("settled");
    expect(r.redelivered).toBe(false);
    expect(r.receipt).toMatchObject({
      test_mode: true,
      status: "settled",
      network: devnet.network,
      asset: devnet.usdcMint,
      payer: buyer.address,
      pay_to: seller,
      total: 300_000n,
      fee_amount: 0n,
      provider_amount: 300_000n,
    });
    // 0x and hex: never a Solana signature (base58 has neither "0" nor "x").
    expect(r.receipt.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(r.settleResponse).toMatchObject({ success: true, network: devnet.network, payer: buyer.address, transaction: r.receipt.tx_hash });
    expect(await devnet.tokenBalance(buyer.address)).toBe(1_000_000n);
    expect(await devnet.tokenBalance(seller as Address)).toBe(0n);
  }, 60_000);

  it("the same transaction presented 20 times at once settles once: one row, every answer the same receipt", async () => {
    const { checkout } = await solanaCheckout();
    const buyer = await fundedBuyer();
    const requirement = await solanaRequirement(checkout.id);
    const { header, transaction } = await officialHeader(buyer, requirement);
    const results = await Promise.all(Array.from({ length: 20 }, () => payments.submit(checkout.id, "test", header)));
    expect(new Set(results.map((r) => r.receipt.id)).size).toBe(1);
    expect(new Set(results.map((r) => r.receipt.tx_hash)).size).toBe(1);
    expect(results.filter((r) => !r.redelivered)).toHaveLength(1);
    expect(await paymentRows(checkout.id)).toEqual([{ id: results[0]!.receipt.id, test_mode: true, status: "settled" }]);
    // Anything in the fee payer's slot (nobody can sign there) leaves the message, and so the payment, the same.
    const wire = Buffer.from(transaction, "base64");
    wire.fill(7, 1, 65);
    const slotFilled = encodeHeader({ x402Version: 2, accepted: requirement, payload: { transaction: wire.toString("base64") } });
    expect(await payments.submit(checkout.id, "test", slotFilled)).toMatchObject({ redelivered: true, receipt: { id: results[0]!.receipt.id } });
    // Presented at another checkout's test face it matches nothing issued there.
    const { checkout: other } = await solanaCheckout();
    await expect(payments.submit(other.id, "test", header)).rejects.toMatchObject({
      slug: "payment-required",
      extensions: { reason: "no_matching_requirements" },
    });
  }, 60_000);

  describe("refusals: a precise reason, nothing recorded", () => {
    async function expectRefused(checkoutId: string, header: string, reason: string) {
      const refused = await payments.submit(checkoutId, "test", header).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ProblemError);
      expect({ slug: (refused as ProblemError).slug, reason: (refused as ProblemError).extensions.reason }).toEqual({ slug: "payment-required", reason });
      expect(await paymentRows(checkoutId)).toEqual([]);
    }

    it("another amount, destination or fee payer signed by the official client; another mint signed by hand", async () => {
      const { checkout } = await solanaCheckout();
      const buyer = await fundedBuyer();
      const issued = await solanaRequirement(checkout.id);
      const other = (await generateKeyPairSigner()).address;
      await devnet.setTokenBalance(other, 0n);
      await expectRefused(checkout.id, (await officialHeader(buyer, issued, { ...issued, amount: "1" })).header, "invalid_exact_svm_payload_amount_mismatch");
      await expectRefused(
        checkout.id,
        (await officialHeader(buyer, issued, { ...issued, payTo: other })).header,
        "invalid_exact_svm_payload_recipient_mismatch",
      );
      // The service's own fee payer: a transaction that could land, which a rehearsal never takes.
      const landable = { ...issued, extra: { ...issued.extra, feePayer: rig.feePayer } };
      await expectRefused(checkout.id, (await officialHeader(buyer, issued, landable)).header, "invalid_exact_svm_fee_payer_mismatch");

      const { transaction } = await officialHeader(buyer, issued);
      const otherMint = await resigned(buyer, transaction, devnet.usdcMint, other);
      await expectRefused(
        checkout.id,
        encodeHeader({ x402Version: 2, accepted: issued, payload: { transaction: otherMint } }),
        "invalid_exact_svm_payload_mint_mismatch",
      );
      // Its memo's last character (before the v0 message's empty lookup-table list) changed after signing: the buyer's signature no longer covers it.
      const tampered = Buffer.from(transaction, "base64");
      tampered[tampered.length - 2] = tampered[tampered.length - 2]! ^ 1;
      await expectRefused(
        checkout.id,
        encodeHeader({ x402Version: 2, accepted: issued, payload: { transaction: tampered.toString("base64") } }),
        "invalid_exact_svm_payload_signature_invalid",
      );
    }, 60_000);

    it("a rehearsal payment at the armed live face is refused as one, whatever its network", async () => {
      const { checkout, seller } = await solanaCheckout();
      const buyer = await fundedBuyer();
      const { header } = await officialHeader(buyer, await solanaRequirement(checkout.id));
      const refused = await payments.submit(checkout.id, "live", header).catch((err: unknown) => err);
      expect((refused as ProblemError).extensions.reason).toBe("rehearsal_payment_on_live_face");
      expect(await paymentRows(checkout.id)).toEqual([]);
      expect(await devnet.tokenBalance(seller as Address)).toBe(0n);
    }, 60_000);
  });

  it("the buyer's transaction sent to the devnet as it is never lands: no key can sign as its fee payer", async () => {
    const { checkout, seller } = await solanaCheckout();
    const buyer = await fundedBuyer();
    const { header, transaction } = await officialHeader(buyer, await solanaRequirement(checkout.id));
    await payments.submit(checkout.id, "test", header);
    const res = await fetch(devnet.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "sendTransaction", params: [transaction, { encoding: "base64" }] }),
    });
    const body = (await res.json()) as { result?: string; error?: { message: string } };
    expect(body.result).toBeUndefined();
    expect(body.error?.message).toMatch(/signature/i);
    expect(await devnet.tokenBalance(buyer.address)).toBe(1_000_000n);
    expect(await devnet.tokenBalance(seller as Address)).toBe(0n);
  }, 60_000);
});
