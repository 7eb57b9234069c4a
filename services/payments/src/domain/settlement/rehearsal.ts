import { ProblemError } from "@c402/problems";
import { syntheticTxHash, type ContractSignatureCheck, type PaymentPayload, type PaymentRequirements } from "@c402/x402";
import { paymentSettledEvent } from "../../events/payment-settled";
import { paymentsStore as store, type PaymentRow, type PaymentsDb } from "../../store/payments-store";
import { assertRedeliverable, authorizationKey, newPaymentRow } from "../payment-row";
import { REHEARSAL_NETWORK, type CheckoutForPayment, type LiveRail } from "../requirements";
import { paymentRejected, verifyPayment, type VerifiedPayment } from "../verify-payment";
import type { Settlement, SettlementOutcome } from "./settlement";

export interface RehearsalSettlementOptions {
  db: PaymentsDb;
  subjectSecret: string;
  /** Called after a commit that wrote an outbox event. */
  onCommitted: () => void;
  now: () => Date;
  /**
   * EIP-1271 checks against the chain of a network this service also settles
   * live, so a contract wallet can rehearse; undefined where there is none.
   */
  contractSignatures?: (network: string) => ContractSignatureCheck | undefined;
}

/**
 * Rehearsal payments (ADR 5): verified like live ones, then settled simulated
 * in one statement (payment row with its receipt fields and the
 * `payment.settled` outbox event), with the synthetic transaction hash. The
 * same payment again redelivers the same receipt; concurrent duplicates
 * collapse on the authorization's unique index. No money moves: the buyer
 * signed under a domain no token has.
 */
export class RehearsalSettlement implements Settlement {
  readonly kind = "simulated" as const;

  constructor(private readonly opts: RehearsalSettlementOptions) {}

  settles(network: string): boolean {
    return network === REHEARSAL_NETWORK;
  }

  rails(): readonly LiveRail[] {
    return [];
  }

  signers(): readonly string[] {
    return [];
  }

  async verify(_checkout: CheckoutForPayment, payload: PaymentPayload, requirement: PaymentRequirements): Promise<void> {
    if (await this.isRecorded(payload, requirement)) throw paymentRejected("invalid_exact_evm_nonce_already_used", "This authorization has already been used.");
    await this.check(payload, requirement);
  }

  async isRecorded(payload: PaymentPayload, requirement: PaymentRequirements): Promise<boolean> {
    return (await store.findByAuthorization(this.opts.db, authorizationKey(true, requirement, payload))) !== undefined;
  }

  async submit(
    checkout: CheckoutForPayment,
    payload: PaymentPayload,
    requirement: PaymentRequirements,
    handoffId: string | null = null,
  ): Promise<SettlementOutcome> {
    const { db } = this.opts;
    const key = authorizationKey(true, requirement, payload);
    const existing = await store.findByAuthorization(db, key);
    if (existing) return redelivered(existing, checkout.id, payload);

    const verified = await this.check(payload, requirement);
    const settledAt = this.opts.now();
    const row = newPaymentRow({
      checkout,
      requirement,
      payload,
      subjectSecret: this.opts.subjectSecret,
      now: settledAt,
      handoffId,
      saga: {
        status: "settled",
        test_mode: true,
        tx_hash: syntheticTxHash(requirement.network, verified.payer, key.nonce),
        settled_at: settledAt,
        split_address: null,
        single_shot: false,
      },
    });
    if (!(await store.insertSettledWithEvent(db, row, paymentSettledEvent(row, checkout.reusable)))) {
      // A concurrent duplicate settled first: redeliver what it recorded.
      const winner = await store.findByAuthorization(db, key);
      if (!winner) throw new ProblemError("internal", "The payment could not be recorded.");
      return redelivered(winner, checkout.id, payload);
    }
    this.opts.onCommitted();
    return { kind: "settled", row, redelivered: false };
  }

  /** Nothing is ever left unfinished: a rehearsal settles in the statement that records it. */
  async sweep(): Promise<number> {
    return 0;
  }

  private check(payload: PaymentPayload, requirement: PaymentRequirements): Promise<VerifiedPayment> {
    return verifyPayment(payload, requirement, Math.floor(this.opts.now().getTime() / 1000), this.opts.contractSignatures?.(requirement.network));
  }
}

function redelivered(existing: PaymentRow, checkoutId: string, payload: PaymentPayload): SettlementOutcome {
  assertRedeliverable(existing, checkoutId, payload);
  return { kind: "settled", row: existing, redelivered: true };
}
