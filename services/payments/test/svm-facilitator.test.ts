import { ProblemError } from "@c402/problems";
import type { SolanaDevnet } from "@c402/solana-devnet";
import { describeWith } from "@c402/testkit";
import type { PaymentRequirements } from "@c402/x402";
import { generateKeyPairSigner } from "@solana/kit";
import { toClientSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { Facilitator } from "../src/domain/facilitator";
import { requirementsFor, type CheckoutForPayment } from "../src/domain/requirements";
import type { LiveSvmSettlement } from "../src/domain/settlement/live-svm";
import { openSvmRig, solanaSellingCheckout, type SvmRig } from "./support/svm-saga";

/**
 * The public facilitator's `solana` family: it lists the devnet with the
 * service's fee payer, verifies and settles what this service issued for a
 * checkout's live face (the checkout's sale, through the Solana saga), and
 * refuses anything else before the fee payer signs.
 */
describeWith("postgres")("the facilitator's solana family (PostgreSQL, Solana devnet)", () => {
  let rig: SvmRig;
  let devnet: SolanaDevnet;
  let saga: LiveSvmSettlement;
  let facilitator: Facilitator;
  let feePayer: string;
  const checkouts = new Map<string, CheckoutForPayment>();

  beforeAll(async () => {
    rig = await openSvmRig("svm-facilitator");
    ({ devnet, saga, feePayer } = rig);
    const source = async (id: string) => {
      const c = checkouts.get(id);
      if (!c) throw new ProblemError("not-found", "No such checkout.");
      return c;
    };
    facilitator = new Facilitator({ checkouts: source, settlements: [saga] });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  async function sellingCheckout(): Promise<{ checkout: CheckoutForPayment; seller: string; requirement: PaymentRequirements }> {
    const { checkout, seller } = await solanaSellingCheckout(devnet, { accountId: "acc_f" });
    checkouts.set(checkout.id, checkout);
    const requirement = requirementsFor("live", checkout, saga.rails())[0] as PaymentRequirements;
    return { checkout, seller, requirement };
  }

  async function payment(requirement: PaymentRequirements, signed: PaymentRequirements = requirement) {
    const buyer = await generateKeyPairSigner();
    await devnet.setTokenBalance(buyer.address, 1_000_000n);
    const client = new ExactSvmScheme(toClientSvmSigner(buyer), { rpcUrl: devnet.url });
    const created = await client.createPaymentPayload(2, signed as Parameters<ExactSvmScheme["createPaymentPayload"]>[1]);
    return { buyer: buyer.address, payload: { x402Version: 2, accepted: requirement, payload: created.payload } };
  }

  it("lists the devnet with the fee payer as extra.feePayer and as the solana signer; other families list nothing of it", () => {
    expect(facilitator.supported("solana")).toEqual({
      kinds: [{ x402Version: 2, scheme: "exact", network: devnet.network, extra: { feePayer } }],
      extensions: [],
      signers: { "solana:*": [feePayer] },
    });
    expect(facilitator.supported("base").kinds).toEqual([]);
  });

  it("verifies then settles a payment for a requirement it issued: the checkout's sale, paid to the seller", async () => {
    const { seller, requirement } = await sellingCheckout();
    const { buyer, payload } = await payment(requirement);
    expect(await facilitator.verify("solana", devnet.network, requirement, payload)).toEqual({ isValid: true, payer: buyer });
    expect(await devnet.tokenBalance(seller as never)).toBe(0n);
    const settled = await facilitator.settle("solana", devnet.network, requirement, payload);
    expect(settled).toMatchObject({ success: true, network: devnet.network, payer: buyer });
    expect(settled.transaction).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(await devnet.tokenBalance(seller as never)).toBe(300_000n);
    // Settled again: the same transaction, nothing moves twice.
    expect(await facilitator.settle("solana", devnet.network, requirement, payload)).toMatchObject({ success: true, transaction: settled.transaction });
    expect(await devnet.tokenBalance(seller as never)).toBe(300_000n);
  }, 60_000);

  it("refuses before signing: another family, a requirement it did not issue, a payment for another amount", async () => {
    const { seller, requirement } = await sellingCheckout();
    const { payload } = await payment(requirement);
    expect(await facilitator.verify("base", devnet.network, requirement, payload)).toMatchObject({ isValid: false, invalidReason: "invalid_network" });
    const foreign = { ...requirement, payTo: (await generateKeyPairSigner()).address };
    expect(await facilitator.settle("solana", devnet.network, foreign, payload)).toMatchObject({ success: false, errorReason: "invalid_payment_requirements" });
    const cheaper = await payment(requirement, { ...requirement, amount: "1" });
    expect(await facilitator.settle("solana", devnet.network, requirement, cheaper.payload)).toMatchObject({
      success: false,
      errorReason: "invalid_exact_svm_payload_amount_mismatch",
    });
    expect(await devnet.tokenBalance(seller as never)).toBe(0n);
  }, 60_000);
});
