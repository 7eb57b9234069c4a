import type { ProblemError } from "@c402/problems";
import type { AnyPaymentPayload, PaymentRequirements } from "@c402/x402";
import type { AuthorizationKey, PaymentRow } from "../../store/payments-store";
import type { PresentedPayment } from "../payment-row";
import type { CheckoutForPayment, Rail } from "../requirements";

/**
 * How the rehearsal reads the payments of one chain family (ADR 5): the rail
 * its faces quote, and the checks a payment gets before it is settled
 * simulated. Each family's rehearsal requirement is one no chain settles
 * (EVM: a domain no token has; Solana: a fee payer no key exists for) or one
 * the service never submits (Stellar: a testnet authorization of a token with
 * no value), so a payment that passes them moves nothing of value.
 */
export interface RehearsalFamily {
  readonly rail: Rail;
  /** Who pays, as the family writes addresses; undefined when the payload is not this family's or does not say. */
  payerOf(payload: AnyPaymentPayload): string | undefined;
  /** What identifies the payment (its row's key); a payload this family cannot read is the buyer's problem. */
  keyOf(payload: AnyPaymentPayload, requirement: PaymentRequirements): AuthorizationKey;
  /** The family's checks (nothing written, no chain asked), and the payment as its row records it. */
  verify(payload: AnyPaymentPayload, requirement: PaymentRequirements, checkout: CheckoutForPayment): Promise<PresentedPayment>;
  /** A recorded payment presented again redelivers only when it is the very one recorded, for the same checkout. */
  assertRedeliverable(row: PaymentRow, checkoutId: string, payload: AnyPaymentPayload): void;
  /** The refusal of a payment already recorded (the facilitator's verify). */
  alreadyUsed(): ProblemError;
}
