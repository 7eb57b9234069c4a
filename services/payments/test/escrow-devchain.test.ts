import { EmbeddedPostgres, migrate } from "@c402/db";
import { C402Escrow, ESCROW_STATE, escrowId, type EscrowTerms } from "@c402/evm-contracts";
import { newId } from "@c402/ids";
import { encodeHeader, preparedEscrowDeposit, type ExactEvmAuthorization, type PaymentRequirements } from "@c402/x402";
import type { PrivateKeyAccount } from "viem/accounts";
import { getAddress, type Hex } from "viem";
import { EscrowRig } from "../../../packages/devchain/test/support/escrow-rig";
import { paymentsMigrations } from "../src";
import type { EscrowNetwork } from "../src/domain/escrow-sale";
import { Payments } from "../src/domain/payments";
import type { CheckoutForPayment } from "../src/domain/requirements";
import { EscrowSettlement, type DepositAnswer, type DepositCall } from "../src/domain/settlement/escrow";
import type { PaymentsDb } from "../src/store/payments-store";

/**
 * An escrow sale end to end against the C402Escrow contract on the devchain:
 * what /prepare answers, signed by the buyer's wallet and verified by
 * payments, is a deposit the contract accepts (the escrow service's relayer
 * is played here by a Deposit that sends depositWithSignature), and the
 * escrow it opens is the one the authorization's nonce names, holding the
 * price plus the escrow fee.
 */
describe("escrow sale on the devchain contract", () => {
  let rig: EscrowRig;
  let pg: EmbeddedPostgres;
  let payments: Payments;
  const checkouts = new Map<string, CheckoutForPayment>();
  const deposited: DepositCall[] = [];

  beforeAll(async () => {
    rig = await EscrowRig.start();
    pg = await EmbeddedPostgres.open();
    const database = pg.forSchema("payments");
    await migrate(database, paymentsMigrations);
    const db = database.db as PaymentsDb;
    const network: EscrowNetwork = {
      network: `eip155:${rig.chain.chainId}`,
      chainId: rig.chain.chainId,
      contract: getAddress(rig.escrow),
      token: { address: getAddress(rig.usdc), name: rig.chain.usdcName, version: rig.chain.usdcVersion },
      feeTo: rig.payee(),
    };
    // The escrow service's Deposit, as its relayer sends it: depositWithSignature of the terms and the buyer's signature.
    const deposits = {
      async deposit(call: DepositCall): Promise<DepositAnswer> {
        deposited.push(call);
        const a = call.authorization;
        const receipt = await rig.call(rig.relayer, "depositWithSignature", [call.terms, BigInt(a.validAfter), BigInt(a.validBefore), a.signature]);
        return { outcome: "held", replayed: false, txHash: receipt.transactionHash };
      },
    };
    payments = new Payments({
      db,
      checkouts: async (id) => checkouts.get(id) as CheckoutForPayment,
      settlements: [new EscrowSettlement({ db, subjectSecret: "test-secret", now: () => new Date(), network, testMode: false, deposits })],
    });
  }, 120_000);
  afterAll(async () => {
    await rig?.stop();
    await pg?.close();
  });

  it("deposits what the buyer signed from /prepare: the contract holds the price plus the escrow fee under the signed escrow id", async () => {
    const [buyer, seller, arbiter] = await Promise.all([rig.party(), rig.party(), rig.party()]);
    const checkout: CheckoutForPayment = {
      id: newId("escrowCheckout"),
      accountId: "acct_seller",
      title: "Vintage lamp",
      priceAtomic: 2_000_000n,
      payTo: seller.address,
      armed: true,
      reusable: true,
      status: "open",
      escrow: { preset: "shipping", settleSeconds: 14 * 86_400, holdSeconds: 7 * 86_400, backstopSeconds: 30 * 86_400, arbiterEvm: arbiter.address },
    };
    checkouts.set(checkout.id, checkout);
    // $2.00 + 1% + $0.02.
    const total = 2_040_000n;
    await rig.mint(buyer.address, total);
    const before = await rig.balance(rig.escrow);

    const prepared = await payments.prepare(checkout.id, "live", { payer: buyer.address });
    const a = prepared.authorization;
    if (!a || prepared.salt === undefined) throw new Error("an escrow prepare answers an authorization and a salt");
    expect(a.value).toBe(total.toString());
    const [call] = await signAndPay(prepared.requirement, a, prepared.salt, buyer, checkout.id);
    const terms = (call as DepositCall).terms as EscrowTerms;
    const id = escrowId(terms, rig.chain.chainId, rig.escrow);
    expect(id).toBe(a.nonce);
    expect(await rig.state(id)).toBe(ESCROW_STATE.held);
    expect(await rig.balances({ buyer: buyer.address, contract: rig.escrow })).toEqual({ buyer: 0n, contract: before + total });
    expect(terms).toMatchObject({ buyer: buyer.address, seller: seller.address, arbiter: arbiter.address, amount: 2_000_000n, fee: 40_000n, preset: 2 });
    const onChain = await rig.pub.readContract({ address: rig.escrow, abi: C402Escrow.abi, functionName: "escrows", args: [id] });
    expect(onChain.state).toBe(ESCROW_STATE.held);
  }, 60_000);

  /** The buyer's wallet signs the typed data the contract package builds for the prepared authorization's terms (as /prepare shows them), then pays. */
  async function signAndPay(
    requirement: PaymentRequirements,
    a: ExactEvmAuthorization,
    salt: string,
    buyer: PrivateKeyAccount,
    checkoutId: string,
  ): Promise<DepositCall[]> {
    const shown = preparedEscrowDeposit(requirement, a, `https://pay.example/e/${checkoutId}`, salt);
    const { EIP712Domain: _domain, ...types } = shown.typedData.types;
    const signature = await buyer.signTypedData({
      domain: shown.typedData.domain,
      types,
      primaryType: "ReceiveWithAuthorization",
      message: {
        from: getAddress(a.from),
        to: getAddress(a.to),
        value: BigInt(a.value),
        validAfter: BigInt(a.validAfter),
        validBefore: BigInt(a.validBefore),
        nonce: a.nonce as Hex,
      },
    });
    const header = encodeHeader({ ...shown.payloadStub, payload: { ...shown.payloadStub.payload, signature } });
    const r = await payments.submit(checkoutId, "live", header);
    expect(r.status).toBe("held");
    return deposited.slice(-1);
  }
});
