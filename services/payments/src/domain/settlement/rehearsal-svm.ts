import {
  decodeExactSvmPayment,
  rehearsalPolicy,
  REHEARSAL_FEE_PAYER,
  SvmPaymentRejected,
  verifyExactSvmPaymentOffline,
  type ExactSvmPolicy,
} from "@c402/svm-chain";
import { svmRehearsalNetwork, SVM_NETWORKS, type AnyPaymentPayload, type PaymentRequirements } from "@c402/x402";
import type { PaymentRow } from "../../store/payments-store";
import type { PresentedPayment } from "../payment-row";
import { singleTransferAmounts, type CheckoutForPayment, type Rail } from "../requirements";
import { paymentOf, requirementOf, svmPaymentKey, svmPresentedPayment, svmRejected } from "./live-svm";
import type { RehearsalFamily } from "./rehearsal-family";

/** Where Solana rehearsals are quoted (`svmRehearsalNetwork`): the deployment's network and mint when it is a testnet, else the devnet's. */
export function rehearsalSolanaNetwork(live: { network: string; usdcMint: string }): { network: string; usdcMint: string } {
  const network = svmRehearsalNetwork(live.network);
  return network === live.network ? live : { network, usdcMint: SVM_NETWORKS[network].usdc };
}

/**
 * Solana rehearsals (ADR 5): the live requirement's shape (the price, one
 * transfer to the seller's USDC account, ADR 15) with a fee payer that is a
 * program-derived address, which no key can sign for: the buyer's transaction
 * can never land on any cluster. It is held to the live checks and its
 * signatures verified here, without a simulation or any chain call, so
 * rehearsals work whatever the deployment's node is.
 */
export class SvmRehearsal implements RehearsalFamily {
  readonly rail: Rail;
  private readonly policy: ExactSvmPolicy;

  /** `testnet`: the Solana network and USDC mint the rehearsal face quotes. */
  constructor(
    { network, usdcMint }: { network: string; usdcMint: string },
    private readonly now: () => Date,
  ) {
    this.policy = rehearsalPolicy(usdcMint);
    this.rail = {
      network,
      asset: usdcMint,
      extra: { feePayer: REHEARSAL_FEE_PAYER, rehearsal: true },
      // One transfer to the seller, as live: a platform cut could not ride along (ADR 15).
      payTo: (checkout) => (checkout.platform ? undefined : checkout.payoutAddresses?.solana),
      amounts: singleTransferAmounts,
    };
  }

  payerOf(payload: AnyPaymentPayload): string | undefined {
    try {
      return paymentOf(payload).payer;
    } catch {
      return undefined;
    }
  }

  keyOf(payload: AnyPaymentPayload, requirement: PaymentRequirements) {
    return svmPaymentKey(true, requirement, paymentOf(payload));
  }

  async verify(payload: AnyPaymentPayload, requirement: PaymentRequirements, checkout: CheckoutForPayment): Promise<PresentedPayment> {
    const payment = paymentOf(payload);
    try {
      await verifyExactSvmPaymentOffline(payment, requirementOf(requirement), this.policy);
    } catch (err) {
      if (err instanceof SvmPaymentRejected) throw svmRejected(err.reason, err.message);
      throw err;
    }
    // No chain bounds a transaction that never lands: the requirement's timeout from its presentation stands in for
    // its validity, so a relay rehearsal's origin gets the time an EVM one gets (ADR 9).
    const validBefore = BigInt(Math.floor(this.now().getTime() / 1000) + requirement.maxTimeoutSeconds);
    return { ...svmPresentedPayment(true, checkout, requirement, payment), validBefore };
  }

  /** The same message (the row's key) signed by its payer, for the same checkout; the fee payer's slot, which nobody can fill, is ignored. */
  assertRedeliverable(row: PaymentRow, checkoutId: string, payload: AnyPaymentPayload): void {
    const presented = paymentOf(payload).signatures[1];
    const recorded = decodeExactSvmPayment(String(row.authorization.transaction)).signatures[1];
    if (!presented || !recorded || !Buffer.from(presented).equals(Buffer.from(recorded))) {
      throw svmRejected("invalid_exact_svm_payload_signature_invalid", "The payer's signature is not the one this transaction was recorded with.");
    }
    if (row.checkout_id !== checkoutId)
      throw svmRejected("invalid_exact_svm_payload_transaction_already_used", "This transaction has already paid for something else.");
  }

  alreadyUsed() {
    return svmRejected("invalid_exact_svm_payload_transaction_already_used", "This transaction has already been presented.");
  }
}
