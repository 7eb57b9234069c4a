import { EVM_NETWORKS, type AnyPaymentPayload, type ContractSignatureCheck, type PaymentRequirements } from "@c402/x402";
import type { PaymentRow } from "../../store/payments-store";
import { assertRedeliverable, authorizationKey, evmPresentedPayment, type PresentedPayment } from "../payment-row";
import { priceOf, REHEARSAL_DOMAIN, REHEARSAL_NETWORK, type CheckoutForPayment, type Rail } from "../requirements";
import { evmPayerOf, evmPayloadOf, paymentRejected, verifyPayment } from "../verify-payment";
import type { RehearsalFamily } from "./rehearsal-family";

/**
 * EVM rehearsals (ADR 5): the testnet's USDC under an EIP-712 domain no token
 * has, paid to the checkout's EVM wallet, verified as live payments are (a
 * contract wallet's signature asked of a chain this service settles live).
 */
export class EvmRehearsal implements RehearsalFamily {
  readonly rail: Rail;

  constructor(
    private readonly opts: {
      now: () => Date;
      /** A rehearsed series' day, in seconds (the compressed clock, ADR 20). */
      seriesDaySeconds: number;
      /** EIP-1271 checks against the chain of a network this service also settles live; undefined where there is none. */
      contractSignatures?: (network: string) => ContractSignatureCheck | undefined;
    },
  ) {
    this.rail = {
      network: REHEARSAL_NETWORK,
      asset: EVM_NETWORKS[REHEARSAL_NETWORK].usdc,
      extra: { name: REHEARSAL_DOMAIN.name, version: REHEARSAL_DOMAIN.version, rehearsal: true },
      payTo: (checkout) => checkout.payTo,
      amounts: priceOf,
      seriesDaySeconds: opts.seriesDaySeconds,
    };
  }

  payerOf(payload: AnyPaymentPayload): string | undefined {
    return evmPayerOf(payload);
  }

  keyOf(payload: AnyPaymentPayload, requirement: PaymentRequirements) {
    return authorizationKey(true, requirement, evmPayloadOf(payload));
  }

  async verify(presented: AnyPaymentPayload, requirement: PaymentRequirements, checkout: CheckoutForPayment): Promise<PresentedPayment> {
    const payload = evmPayloadOf(presented);
    const nowSeconds = Math.floor(this.opts.now().getTime() / 1000);
    await verifyPayment(payload, requirement, nowSeconds, this.opts.contractSignatures?.(requirement.network));
    return evmPresentedPayment(true, checkout, requirement, payload);
  }

  assertRedeliverable(row: PaymentRow, checkoutId: string, payload: AnyPaymentPayload): void {
    assertRedeliverable(row, checkoutId, evmPayloadOf(payload));
  }

  alreadyUsed() {
    return paymentRejected("invalid_exact_evm_nonce_already_used", "This authorization has already been used.");
  }
}
