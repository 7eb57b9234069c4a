import { failpoint } from "@c402/failpoints";
import { ProblemError } from "@c402/problems";
import { paymentSettledEvent } from "../../events/payment-settled";
import { paymentsStore as store, type AuthorizationKey, type PaymentRow, type PaymentsDb } from "../../store/payments-store";
import { newPaymentRow, type PresentedPayment } from "../payment-row";
import type { CheckoutForPayment } from "../requirements";
import { settlementFailed } from "../verify-payment";
import { answerByOf, releasedMeanwhile, stillDelivering, type PaidOnDelivery } from "./paid-on-delivery";
import type { PurchaseCall, RailFamily, Settlement, SettlementOutcome } from "./settlement";

/** What every rail's saga needs, whatever its chain. */
export interface OnchainSettlementOptions<Chain = unknown> {
  /** The rail's networks, by CAIP-2 id: each one's chain adapter. */
  chains: ReadonlyMap<string, Chain>;
  db: PaymentsDb;
  subjectSecret: string;
  /** How long a buyer's request waits for the chain's answer before answering "pending". */
  settleTimeoutMs: number;
  /** Called after a commit that wrote an outbox event. */
  onCommitted: () => void;
  now: () => Date;
  onSweepError?: (err: unknown, paymentId: string) => void;
  /** The delivery step of relay sales (absent: relay checkouts cannot be paid on this rail here). */
  paidOnDelivery?: PaidOnDelivery;
}

/** Every saga state a live payment can be settled from (a relay sale settles only once delivered). */
export const SETTLEABLE: ("claimed" | "delivered" | "settling")[] = ["claimed", "delivered", "settling"];

/** A claim's result: the new row to drive, or the payment already recorded under its key (a duplicate). */
export type Claim = { claimed: PaymentRow } | { recorded: PaymentRow };

/**
 * The first step of the purchase saga (ADR 8), for every settlement that
 * records before it acts (the live rails, escrow deposits): the payment
 * written as claimed under its key. A payment already recorded under the same
 * key answers as `recorded` (the caller resumes it); a live single-shot
 * checkout sold to another payment meanwhile is gone (nothing charged).
 */
export async function claimPayment(
  saga: { db: PaymentsDb; subjectSecret: string; now: Date; testMode: boolean },
  checkout: CheckoutForPayment,
  presented: PresentedPayment,
  call: PurchaseCall,
  splitAddress: string | null = null,
): Promise<Claim> {
  const { now } = saga;
  const row = newPaymentRow({
    checkout,
    presented,
    subjectSecret: saga.subjectSecret,
    now,
    handoffId: call.handoffId ?? null,
    // A relay sale settles only while its buyer's request can still be answered (ADR 9).
    ...(checkout.relay ? { answerBy: answerByOf(call.answerBy, now) } : {}),
    ...(call.series ? { series: call.series } : {}),
    // Rehearsals never close a single-shot checkout (ADR 5).
    saga: {
      status: "claimed",
      test_mode: saga.testMode,
      tx_hash: null,
      settled_at: null,
      split_address: splitAddress,
      single_shot: !saga.testMode && !checkout.reusable,
    },
  });
  if (!(await store.insertIfNew(saga.db, row))) {
    // The payment is recorded (a duplicate: its outcome), or the single-shot checkout sold to another payment.
    const winner = await store.findByAuthorization(saga.db, presented.key);
    if (!winner) {
      throw new ProblemError("gone", {
        message: "This single-shot checkout has already been paid.",
        help: { fix: "Ask the seller for a new link. You were not charged.", retry_is_safe: false },
      });
    }
    return { recorded: winner };
  }
  return { claimed: row };
}

/** A payment presented to a rail whose buyer's signed payment is settled as it is (Solana, Stellar): what `settleOnce` needs of it. */
export interface PresentedOnce {
  key: AuthorizationKey;
  /** The rail's checks (nothing recorded, nothing sent); throws the buyer's problem. */
  check(): Promise<void>;
  /** The payment as it is recorded, read once the checks passed. */
  presented(): Promise<PresentedPayment>;
  /** A copy already recorded: its outcome (after the rail checked it is the same sale). */
  resume(recorded: PaymentRow): Promise<SettlementOutcome>;
  /** Settles the claimed payment on the chain. */
  drive(claimed: PaymentRow): Promise<SettlementOutcome>;
}

/**
 * The purchase saga every live rail shares (ADR 8), on the payments table:
 * **record first** (the payment claimed under its key, what makes it unique
 * on its chain), **then act** (the rail signs, stores the signed transaction
 * and its id as `settling`, then sends), **resume from the record** (a
 * duplicate waits for the recorded payment's outcome; the sweep asks the
 * chain about the stored id first). Receipt and `payment.settled` event in
 * one statement. A relay sale is delivered between the claim and the
 * signing, and settled only while its buyer still waits (ADR 9).
 *
 * A rail supplies how a claimed payment is driven on its chain (`drive`),
 * how a sent one's outcome is awaited (`outcomeOfSent`) and how the sweep
 * resumes one (`sweepOne`); docs/adding-a-rail.md.
 */
export abstract class OnchainSettlement<Chain> implements Pick<Settlement, "kind" | "family" | "settles" | "sweep"> {
  readonly kind = "onchain" as const;
  abstract readonly family: RailFamily;
  protected readonly db: PaymentsDb;

  constructor(protected readonly saga: OnchainSettlementOptions<Chain>) {
    this.db = saga.db;
  }

  settles(network: string): boolean {
    return this.saga.chains.has(network);
  }

  /** The networks whose unfinished payments this settlement's sweep resumes. */
  protected networks(): string[] {
    return [...this.saga.chains.keys()];
  }

  /** The chain adapter of `network` (503 when this deployment does not settle there). */
  protected chain(network: string): Chain {
    const chain = this.saga.chains.get(network);
    if (chain === undefined) throw new ProblemError("unavailable", "This network cannot settle right now.");
    return chain;
  }

  /**
   * Settles a payment once: a copy already recorded answers its outcome; the
   * rail's checks run before anything is recorded (a check failing because a
   * concurrent copy just settled answers that copy's outcome); the claim,
   * then the chain.
   */
  protected async settleOnce(checkout: CheckoutForPayment, call: PurchaseCall, payment: PresentedOnce): Promise<SettlementOutcome> {
    const existing = await store.findByAuthorization(this.db, payment.key);
    if (existing) return payment.resume(existing);
    try {
      await payment.check();
    } catch (err) {
      const recorded = await store.findByAuthorization(this.db, payment.key);
      if (recorded) return payment.resume(recorded);
      throw err;
    }
    const claim = await this.claim(checkout, await payment.presented(), call);
    if ("recorded" in claim) return payment.resume(claim.recorded);
    return this.settleClaimed(claim.claimed, checkout, call, (row) => payment.drive(row));
  }

  /** The outcome of a payment whose transaction is recorded and sent, waiting up to `timeoutMs` for the chain (pending when it does not answer). */
  protected abstract outcomeOfSent(row: PaymentRow, timeoutMs: number): Promise<SettlementOutcome>;
  /** Resumes one unfinished payment (not a relay claim still waiting for its delivery: the base releases those). */
  protected abstract sweepOne(row: PaymentRow): Promise<void>;

  /**
   * Records a new payment as claimed. A payment already recorded under the
   * same key answers as `recorded` (the caller resumes it); a single-shot
   * checkout sold to another payment meanwhile is gone (nothing charged).
   */
  protected async claim(checkout: CheckoutForPayment, presented: PresentedPayment, call: PurchaseCall, splitAddress: string | null = null): Promise<Claim> {
    const claim = await claimPayment(
      { db: this.db, subjectSecret: this.saga.subjectSecret, now: this.saga.now(), testMode: false },
      checkout,
      presented,
      call,
      splitAddress,
    );
    if ("claimed" in claim) failpoint("after-claim");
    return claim;
  }

  /**
   * Settles a claimed payment: an inline sale straight away; a relay sale
   * only once its origin's charged answer is recorded (ADR 9), which the
   * outcome then carries.
   */
  protected async settleClaimed(
    claimed: PaymentRow,
    checkout: CheckoutForPayment,
    call: PurchaseCall,
    drive: (row: PaymentRow) => Promise<SettlementOutcome>,
  ): Promise<SettlementOutcome> {
    if (!checkout.relay) return drive(claimed);
    const { row: delivered, delivery } = await this.paidOnDelivery().deliver(claimed, checkout, call.params ?? {});
    failpoint("after-delivery");
    const outcome = await drive(delivered);
    return outcome.kind === "settled" ? { ...outcome, delivery } : outcome;
  }

  protected paidOnDelivery(): PaidOnDelivery {
    if (!this.saga.paidOnDelivery)
      throw new ProblemError("unavailable", "Relay checkouts cannot be paid on this network here: no fulfillment service is configured.");
    return this.saga.paidOnDelivery;
  }

  /** Records the chain's settlement: the receipt's fields and the outbox event, once, in one statement. */
  protected async finalize(
    row: PaymentRow,
    receipt: Partial<Pick<PaymentRow, "tx_hash" | "provider_amount" | "platform_amount" | "fee_amount">> = {},
  ): Promise<PaymentRow> {
    const set = { ...receipt, settled_at: this.saga.now() };
    // A live row is single-shot exactly when its checkout is not reusable.
    const event = paymentSettledEvent({ ...row, ...set }, !row.single_shot);
    const done = await store.settleWithEvent(this.db, row.id, SETTLEABLE, set, event);
    failpoint("after-ledger-commit");
    if (done) this.saga.onCommitted();
    return done ?? (await store.findById(this.db, row.id)) ?? row;
  }

  /** A recorded payment presented again (the rail checked it is the same payment for the same checkout): its outcome, a relay sale's with its origin's recorded answer. */
  protected async redeliver(existing: PaymentRow): Promise<SettlementOutcome> {
    const outcome = await this.current(existing.id);
    if (outcome.kind !== "settled") return outcome;
    // The origin is never called twice for one payment.
    const delivery = await this.saga.paidOnDelivery?.recorded(outcome.row);
    return delivery ? { ...outcome, delivery } : outcome;
  }

  /**
   * Where a payment stands, waiting (up to the settle timeout) while another
   * request drives it: a duplicate of an in-flight payment gets its outcome,
   * not a premature "pending".
   */
  protected async current(id: string): Promise<SettlementOutcome> {
    const deadline = this.saga.now().getTime() + this.saga.settleTimeoutMs;
    for (;;) {
      const row = await store.findById(this.db, id);
      // Only a relay claim whose delivery was not charged is ever removed.
      if (!row) throw releasedMeanwhile();
      if (row.status === "settled") return { kind: "settled", row, redelivered: true };
      if (row.status === "failed") throw settlementFailed("settlement_failed", "This payment did not settle; nothing was charged.", row);
      const remaining = deadline - this.saga.now().getTime();
      if (row.tx_hash) {
        const outcome = await this.outcomeOfSent(row, Math.max(remaining, 1));
        return outcome.kind === "settled" ? { ...outcome, redelivered: true } : outcome;
      }
      if (remaining <= 0) {
        // Nothing sent: a relay sale still waits for its origin in another request. Pending would be untrue.
        if (row.fulfillment !== "inline" && row.fulfillment !== "webhook") throw stillDelivering();
        return { kind: "pending", row };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * Resumes payments left unfinished by a crash or a timeout, with the chain
   * as the truth (each rail's `sweepOne`). A relay claim is the request's
   * that delivers it, while its buyer still waits; past that it is released
   * (ADR 9): nothing is ever sent for it but by that request.
   */
  async sweep(quietMs = 30_000, limit = 50): Promise<number> {
    // Escrow sales on the same network are the EscrowSettlement's to resume: a rail would try to settle them itself.
    const rows = await store.unfinished(this.db, false, new Date(this.saga.now().getTime() - quietMs), limit, this.networks(), "plain");
    for (const row of rows) {
      try {
        if ((row.status === "claimed" || row.status === "delivered") && row.fulfillment !== "inline" && row.fulfillment !== "webhook") {
          await this.saga.paidOnDelivery?.releaseIfUnanswered(row);
        } else {
          await this.sweepOne(row);
        }
      } catch (err) {
        this.saga.onSweepError?.(err, row.id);
      }
    }
    return rows.length;
  }
}
