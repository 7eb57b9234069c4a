import { escrowId, escrowTermsProblem, type EscrowTerms } from "@c402/evm-contracts";
import { invalid, ProblemError } from "@c402/problems";
import { randomNonce, type AnyPaymentPayload, type PaymentPayload, type PaymentRequirements } from "@c402/x402";
import { getAddress, isAddress, type Hex } from "viem";
import { paymentsStore as store, type PaymentRow, type PaymentsDb } from "../../store/payments-store";
import { depositTermsOf, ESCROW_SCHEME, escrowExtra, evmEscrowTermsOf, verifyDeposit, type EscrowNetwork, type VerifiedDeposit } from "../escrow-sale";
import { assertRedeliverable, authorizationKey, type PresentedPayment } from "../payment-row";
import { priceOf, type CheckoutForPayment, type Rail } from "../requirements";
import { evmPayerOf, evmPayloadOf, paymentRejected, settlementFailed } from "../verify-payment";
import { claimPayment } from "./onchain-settlement";
import { stillDelivering, type DeliveryRecord, type PaidOnDelivery } from "./paid-on-delivery";
import type { PreparedDeposit, PurchaseCall, Settlement, SettlementOutcome } from "./settlement";

/** One deposit as payments asks the escrow service for it (escrow.v1 Deposit): keyed by the payment id. */
export interface DepositCall {
  paymentId: string;
  accountId: string;
  checkoutId: string;
  network: string;
  testMode: boolean;
  terms: EscrowTerms;
  authorization: { validAfter: string; validBefore: string; nonce: string; signature: string };
  handoffId: string | null;
}

/** The escrow service's answer: held, or sent and not confirmed yet (pending); refused with the contract's reason; `replayed` when an earlier call recorded it. */
export type DepositAnswer = { outcome: "held" | "pending"; replayed: boolean; txHash?: string } | { outcome: "refused"; reason: string };

/** Where deposits go (the escrow service, over gRPC): one escrow per payment id, whatever the retries. */
export interface EscrowDeposits {
  deposit(call: DepositCall): Promise<DepositAnswer>;
}

export interface EscrowSettlementOptions {
  db: PaymentsDb;
  subjectSecret: string;
  now: () => Date;
  /** The network deposits are made on: the live one, or (a rehearsal) the testnet under the rehearsal domain. */
  network: EscrowNetwork;
  /** A rehearsal (the /e/{id}/test face): the escrow service keeps a test escrow and asks no chain. */
  testMode: boolean;
  deposits: EscrowDeposits;
  /** The delivery step of relay sales (absent: relay escrow checkouts cannot be paid here). */
  paidOnDelivery?: PaidOnDelivery;
  /** Where the sweep reads a deposit's checkout again (its frozen terms); absent: unfinished deposits wait for their payment presented again. */
  checkouts?: (checkoutId: string) => Promise<CheckoutForPayment>;
  onSweepError?: (err: unknown, paymentId: string) => void;
}

/** The saga states a deposit may still be asked from (a relay sale's only once delivered). */
const DEPOSITABLE: ("claimed" | "delivered" | "settling")[] = ["claimed", "delivered", "settling"];

/**
 * An escrow checkout's sales (ADR 19): the requirement (scheme `escrow`,
 * payTo the escrow contract, the escrow fee, `extra.escrow`), the deposit a
 * payer signs (prepareDeposit), its checks (verify) and its settlement by the
 * purchase saga: recorded first under its authorization key, delivered as
 * any sale (inline goods, or a relay origin called before money moves), then
 * deposited by the escrow service (Deposit). The payment ends `held`: no
 * receipt and no payment.settled until the escrow releases it (see
 * events/escrow-outcomes.ts). One instance per face: live (on-chain, through
 * the escrow service's relayer) and rehearsal (a test escrow, no chain asked).
 */
export class EscrowSettlement implements Settlement {
  readonly escrow = true;
  readonly family = "base" as const;
  readonly kind: "onchain" | "simulated";
  private readonly rail: Rail;

  constructor(private readonly opts: EscrowSettlementOptions) {
    this.kind = opts.testMode ? "simulated" : "onchain";
    const at = opts.network;
    this.rail = {
      scheme: ESCROW_SCHEME,
      network: at.network,
      asset: getAddress(at.token.address),
      extra: { name: at.token.name, version: at.token.version, ...(opts.testMode ? { rehearsal: true } : {}) },
      // Base only, and only where the checkout names an EVM arbiter (ADR 19).
      payTo: (checkout) => (evmEscrowTermsOf(checkout) ? getAddress(at.contract) : undefined),
      amounts: priceOf,
      extraFor: (checkout) => {
        const terms = evmEscrowTermsOf(checkout);
        return terms ? { escrow: escrowExtra(terms) } : {};
      },
    };
  }

  settles(network: string): boolean {
    return network === this.opts.network.network;
  }

  rails(): readonly Rail[] {
    return [this.rail];
  }

  /** The escrow service's relayer sends deposits, not a key of this service. */
  signers(): readonly string[] {
    return [];
  }

  payerOf(payload: AnyPaymentPayload): string | undefined {
    return evmPayerOf(payload);
  }

  /**
   * What a payer signs to deposit (POST /e/{id}/prepare): a
   * ReceiveWithAuthorization of the requirement's amount to the escrow
   * contract whose nonce is the escrow id of the terms with this payer and a
   * fresh salt, which the payment brings back. 422 when the contract would
   * refuse the terms (the payer is the seller or the arbiter).
   */
  prepareDeposit(checkout: CheckoutForPayment, requirement: PaymentRequirements, payer: string): PreparedDeposit {
    if (!isAddress(payer, { strict: false })) throw invalid([{ field: "payer", reason: "must be a 0x-prefixed EVM address" }]);
    const at = this.opts.network;
    const salt = randomNonce();
    const terms = depositTermsOf(checkout, at, payer, salt);
    const problem = escrowTermsProblem(terms);
    if (problem) throw invalid([{ field: "payer", reason: `the escrow contract would refuse this deposit: ${problem}` }]);
    return {
      salt,
      authorization: {
        from: getAddress(payer),
        to: getAddress(at.contract),
        value: requirement.amount,
        validAfter: "0",
        validBefore: String(Math.floor(this.opts.now().getTime() / 1000) + requirement.maxTimeoutSeconds),
        nonce: escrowId(terms, at.chainId, at.contract),
      },
    };
  }

  async verify(checkout: CheckoutForPayment, presented: AnyPaymentPayload, requirement: PaymentRequirements): Promise<void> {
    if (await this.isRecorded(presented, requirement)) throw paymentRejected("invalid_exact_evm_nonce_already_used", "This deposit has already been made.");
    await this.check(checkout, evmPayloadOf(presented), requirement);
  }

  async isRecorded(payload: AnyPaymentPayload, requirement: PaymentRequirements): Promise<boolean> {
    return (await store.findByAuthorization(this.opts.db, this.keyOf(evmPayloadOf(payload), requirement))) !== undefined;
  }

  async submit(
    checkout: CheckoutForPayment,
    presented: AnyPaymentPayload,
    requirement: PaymentRequirements,
    call: PurchaseCall = {},
  ): Promise<SettlementOutcome> {
    const { db } = this.opts;
    const payload = evmPayloadOf(presented);
    const key = this.keyOf(payload, requirement);
    const existing = await store.findByAuthorization(db, key);
    if (existing) return this.resume(existing, checkout, payload);
    let verified: VerifiedDeposit;
    try {
      verified = await this.check(checkout, payload, requirement);
    } catch (err) {
      // A concurrent copy recorded since the look-up: its outcome is this one's.
      const recorded = await store.findByAuthorization(db, key);
      if (recorded) return this.resume(recorded, checkout, payload);
      throw err;
    }
    const claim = await claimPayment(
      { db, subjectSecret: this.opts.subjectSecret, now: this.opts.now(), testMode: this.opts.testMode },
      checkout,
      this.presented(checkout, payload, requirement),
      call,
    );
    if ("recorded" in claim) return this.resume(claim.recorded, checkout, payload);
    if (!checkout.relay) return this.deposit(claim.claimed, verified.terms, false);
    // A relay sale: its origin is called before anything moves, and only a charged answer is deposited (ADR 9).
    const { row, delivery } = await this.paidOnDelivery().deliver(claim.claimed, checkout, call.params ?? {});
    return withDelivery(await this.deposit(row, verified.terms, false), delivery);
  }

  /**
   * Resumes deposits a crash or a lost answer left unfinished, once quiet: a
   * relay sale whose buyer can no longer be answered is released (ADR 9:
   * nothing was deposited for it); any other is asked of the escrow service
   * again (Deposit is keyed by the payment id: never a second escrow), its
   * terms rebuilt from the checkout. The escrow's events settle the rest.
   */
  async sweep(quietMs = 30_000, limit = 50): Promise<number> {
    const { db, now, testMode, network, checkouts } = this.opts;
    const rows = await store.unfinished(db, testMode, new Date(now().getTime() - quietMs), limit, [network.network], "escrow");
    for (const row of rows) {
      try {
        if (row.fulfillment === "relay" || row.fulfillment === "mcp") {
          if (row.status !== "settling" && (await this.opts.paidOnDelivery?.releaseIfUnanswered(row))) continue;
          // A delivered relay sale still inside its buyer's wait is that request's to deposit.
          if (row.status !== "settling") continue;
        }
        if (!checkouts) continue;
        const terms = depositTermsOf(await checkouts(row.checkout_id), network, row.payer, String(row.authorization.salt) as Hex);
        await this.deposit(row, terms, false);
      } catch (err) {
        this.opts.onSweepError?.(err, row.id);
      }
    }
    return rows.length;
  }

  private keyOf(payload: PaymentPayload, requirement: PaymentRequirements) {
    return authorizationKey(this.opts.testMode, requirement, payload);
  }

  private check(checkout: CheckoutForPayment, payload: PaymentPayload, requirement: PaymentRequirements): Promise<VerifiedDeposit> {
    return verifyDeposit(checkout, this.opts.network, payload, requirement, Math.floor(this.opts.now().getTime() / 1000));
  }

  /** The deposit as its row records it: the seller as pay_to, the split at the escrow fee, and the salt beside the authorization (a resumed deposit rebuilds its terms from it). */
  private presented(checkout: CheckoutForPayment, payload: PaymentPayload, requirement: PaymentRequirements): PresentedPayment {
    const a = payload.payload.authorization;
    return {
      key: this.keyOf(payload, requirement),
      authorization: { ...a, signature: payload.payload.signature, salt: payload.payload.salt ?? "" },
      validBefore: BigInt(a.validBefore),
      payTo: getAddress(checkout.payTo),
      platformFeeTo: checkout.platform ? getAddress(checkout.platform.feeTo) : null,
      amounts: priceOf(checkout),
    };
  }

  /**
   * Asks the escrow service to deposit a recorded payment (keyed by its id: a
   * retry never makes a second escrow): held, pending while the chain has not
   * confirmed it, or failed when the contract refuses it (nothing moved). A
   * call that failed leaves the row as it was, for the same payment presented again.
   */
  private async deposit(row: PaymentRow, terms: EscrowTerms, redelivered: boolean): Promise<SettlementOutcome> {
    const a = row.authorization;
    const answer = await this.opts.deposits.deposit({
      paymentId: row.id,
      accountId: row.account_id,
      checkoutId: row.checkout_id,
      network: row.network,
      testMode: row.test_mode,
      terms,
      authorization: { validAfter: String(a.validAfter), validBefore: String(a.validBefore), nonce: String(a.nonce), signature: String(a.signature) },
      handoffId: row.handoff_id,
    });
    if (answer.outcome === "refused") {
      await store.advance(this.opts.db, row.id, DEPOSITABLE, { status: "failed", failure_reason: "deposit_refused" });
      throw settlementFailed(
        "invalid_escrow_deposit_refused",
        `The escrow contract refuses this deposit: ${answer.reason.replace(/\.$/, "")}. Nothing was charged.`,
        row,
      );
    }
    const set = { status: answer.outcome === "held" ? ("held" as const) : ("settling" as const), ...(answer.txHash ? { tx_hash: answer.txHash } : {}) };
    const moved = (await store.advance(this.opts.db, row.id, DEPOSITABLE, set)) ?? (await store.findById(this.opts.db, row.id)) ?? row;
    if (moved.status === "held" || moved.status === "settled") return { kind: moved.status, row: moved, redelivered };
    return { kind: "pending", row: moved };
  }

  /**
   * A deposit already recorded, presented again (the very payment, for the
   * same checkout): its recorded outcome, with a relay sale's recorded
   * answer; one the escrow service has not confirmed yet is asked again
   * (Deposit is keyed by the payment id).
   */
  private async resume(existing: PaymentRow, checkout: CheckoutForPayment, payload: PaymentPayload): Promise<SettlementOutcome> {
    assertRedeliverable(existing, checkout.id, payload);
    switch (existing.status) {
      case "held":
      case "settled":
        return withDelivery({ kind: existing.status, row: existing, redelivered: true }, await this.opts.paidOnDelivery?.recorded(existing));
      case "refunded":
        throw new ProblemError("gone", {
          message: "This payment's escrow was refunded to the buyer; it buys nothing more.",
          help: { fix: "Request the face again for fresh requirements to buy again.", retry_is_safe: false },
        });
      case "failed":
        throw settlementFailed("invalid_escrow_deposit_refused", "This deposit was refused; nothing was charged.", existing);
      case "claimed":
        // A relay sale's request is still waiting for its origin: nothing may be deposited before its answer.
        if (existing.fulfillment !== "inline" && existing.fulfillment !== "webhook") throw stillDelivering();
        break;
      case "delivered":
      case "settling":
        break;
    }
    const terms = depositTermsOf(checkout, this.opts.network, existing.payer, String(existing.authorization.salt) as Hex);
    return withDelivery(await this.deposit(existing, terms, true), await this.opts.paidOnDelivery?.recorded(existing));
  }

  private paidOnDelivery(): PaidOnDelivery {
    if (!this.opts.paidOnDelivery)
      throw new ProblemError("unavailable", "Relay checkouts cannot be paid in escrow here: no fulfillment service is configured.");
    return this.opts.paidOnDelivery;
  }
}

/** An outcome with the relay delivery that goes with it (a held or settled one only). */
function withDelivery(outcome: SettlementOutcome, delivery: DeliveryRecord | undefined): SettlementOutcome {
  return delivery && outcome.kind !== "pending" ? { ...outcome, delivery } : outcome;
}
