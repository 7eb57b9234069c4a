import { ProblemError } from "@c402/problems";
import { syntheticTxHash, type AnyPaymentPayload, type ContractSignatureCheck, type PaymentRequirements } from "@c402/x402";
import { paymentSettledEvent } from "../../events/payment-settled";
import { paymentsStore as store, type AuthorizationKey, type PaymentRow, type PaymentsDb } from "../../store/payments-store";
import { newPaymentRow, type PresentedPayment } from "../payment-row";
import type { CheckoutForPayment, Rail } from "../requirements";
import { paymentRejected } from "../verify-payment";
import { answerByOf, releasedMeanwhile, type PaidOnDelivery } from "./paid-on-delivery";
import { EvmRehearsal } from "./rehearsal-evm";
import type { RehearsalFamily } from "./rehearsal-family";
import type { StellarRehearsal } from "./rehearsal-stellar";
import { rehearsalSolanaNetwork, SvmRehearsal } from "./rehearsal-svm";
import type { PurchaseCall, SeriesChain, Settlement, SettlementOutcome } from "./settlement";

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
  /** The delivery step of relay sales (absent: relay checkouts cannot be paid here). */
  paidOnDelivery?: PaidOnDelivery;
  /** How long a series day lasts on the test face's compressed clock (SCHEDULE_REHEARSAL_DAY_SECONDS; default 60). */
  seriesDaySeconds?: number;
  /** The deployment's Solana network and USDC mint, when it has a Solana rail (absent: rehearsals are EVM only). */
  solana?: { network: string; usdcMint: string };
  /**
   * The Stellar rehearsal, when the deployment has a Stellar rail (absent: no rehearsal mentions Stellar); built by
   * the caller, so stellar-sdk loads only where Stellar is configured. Quoted on testnet whatever the rail's network.
   */
  stellar?: StellarRehearsal;
}

/** SCHEDULE_REHEARSAL_DAY_SECONDS' default: a rehearsed series day lasts a minute (ADR 20). */
export const REHEARSAL_SERIES_DAY_SECONDS = 60;

/** Rehearsal payments left unfinished are looked at once they have been quiet this long. */
const SWEEP_QUIET_MS = 30_000;

/**
 * Rehearsal payments (ADR 5), of every family it has a rail for (EVM always,
 * Solana and Stellar where the deployment has their rail): verified like live ones by
 * the family's rules, then settled simulated in one statement (payment row
 * with its receipt fields and the `payment.settled` outbox event), with the
 * synthetic transaction hash. The same payment again redelivers the same
 * receipt; concurrent duplicates collapse on the payment key's unique index.
 * No money moves: what the buyer signed is valid on no chain (EVM, Solana),
 * or only on Stellar's testnet, and never submitted.
 */
export class RehearsalSettlement implements Settlement {
  readonly kind = "simulated" as const;
  private readonly families: readonly RehearsalFamily[];

  constructor(private readonly opts: RehearsalSettlementOptions) {
    const { now, contractSignatures, solana, stellar } = opts;
    this.families = [
      new EvmRehearsal({ now, seriesDaySeconds: opts.seriesDaySeconds ?? REHEARSAL_SERIES_DAY_SECONDS, ...(contractSignatures ? { contractSignatures } : {}) }),
      ...(solana ? [new SvmRehearsal(rehearsalSolanaNetwork(solana), now)] : []),
      ...(stellar ? [stellar] : []),
    ];
  }

  settles(network: string): boolean {
    return this.families.some((f) => f.rail.network === network);
  }

  /** The rehearsal face's rails: the EVM one first (every checkout has an EVM wallet), then Solana's, then Stellar's. */
  rails(): readonly Rail[] {
    return this.families.map((f) => f.rail);
  }

  signers(): readonly string[] {
    return [];
  }

  payerOf(payload: AnyPaymentPayload): string | undefined {
    for (const family of this.families) {
      const payer = family.payerOf(payload);
      if (payer !== undefined) return payer;
    }
    return undefined;
  }

  private familyOf(network: string): RehearsalFamily {
    const family = this.families.find((f) => f.rail.network === network);
    if (!family) throw paymentRejected("invalid_network", `Rehearsals do not settle ${network} on this deployment.`);
    return family;
  }

  async verify(checkout: CheckoutForPayment, payload: AnyPaymentPayload, requirement: PaymentRequirements): Promise<void> {
    const family = this.familyOf(requirement.network);
    if (await this.isRecorded(payload, requirement)) throw family.alreadyUsed();
    await family.verify(payload, requirement, checkout);
  }

  async isRecorded(payload: AnyPaymentPayload, requirement: PaymentRequirements): Promise<boolean> {
    return (await store.findByAuthorization(this.opts.db, this.familyOf(requirement.network).keyOf(payload, requirement))) !== undefined;
  }

  async submit(
    checkout: CheckoutForPayment,
    payload: AnyPaymentPayload,
    requirement: PaymentRequirements,
    call: PurchaseCall = {},
  ): Promise<SettlementOutcome> {
    const { db } = this.opts;
    const family = this.familyOf(requirement.network);
    const key = family.keyOf(payload, requirement);
    // Verified first: a fresh payment (the common case) is then one statement, its record and event
    // together. A payment already recorded is found by the insert's conflict, or here when it no longer
    // verifies (an EVM authorization that expired since): either way it is redelivered, never twice charged.
    let presented: PresentedPayment;
    try {
      presented = await family.verify(payload, requirement, checkout);
    } catch (err) {
      const existing = await store.findByAuthorization(db, key);
      if (existing) return this.redeliver(family, existing, checkout.id, payload);
      throw err;
    }
    if (checkout.relay) return this.deliverThenSettle(family, checkout, payload, presented, call);
    const handoffId = call.handoffId ?? null;
    const settledAt = this.opts.now();
    const row = newPaymentRow({
      checkout,
      presented,
      subjectSecret: this.opts.subjectSecret,
      now: settledAt,
      handoffId,
      ...(call.series ? { series: call.series } : {}),
      saga: { status: "settled", test_mode: true, tx_hash: rehearsalTxHash(key), settled_at: settledAt, split_address: null, single_shot: false },
    });
    if (!(await store.insertSettledWithEvent(db, row, paymentSettledEvent(row, checkout.reusable)))) {
      // A concurrent duplicate settled first: redeliver what it recorded.
      const winner = await store.findByAuthorization(db, key);
      if (!winner) throw new ProblemError("internal", "The payment could not be recorded.");
      return this.redeliver(family, winner, checkout.id, payload);
    }
    this.opts.onCommitted();
    return { kind: "settled", row, redelivered: false };
  }

  /**
   * A relay rehearsal (ADR 9): the same origin call as live, paid only on
   * delivery, settled simulated: claimed, delivered, then settled with its
   * event in one statement.
   */
  private async deliverThenSettle(
    family: RehearsalFamily,
    checkout: CheckoutForPayment,
    payload: AnyPaymentPayload,
    presented: PresentedPayment,
    call: PurchaseCall,
  ): Promise<SettlementOutcome> {
    const step = this.paidOnDelivery();
    const { key } = presented;
    const now = this.opts.now();
    const claimed = newPaymentRow({
      checkout,
      presented,
      subjectSecret: this.opts.subjectSecret,
      now,
      handoffId: call.handoffId ?? null,
      answerBy: answerByOf(call.answerBy, now),
      saga: { status: "claimed", test_mode: true, tx_hash: rehearsalTxHash(key), settled_at: null, split_address: null, single_shot: false },
    });
    if (!(await store.insertIfNew(this.opts.db, claimed))) {
      const winner = await store.findByAuthorization(this.opts.db, key);
      if (!winner) throw releasedMeanwhile();
      return this.redeliver(family, winner, checkout.id, payload);
    }
    const { row, delivery } = await step.deliver(claimed, checkout, call.params ?? {});
    const outcome = await this.settleDelivered(row);
    return outcome.kind === "settled" ? { ...outcome, delivery } : outcome;
  }

  /** Settles a delivered relay rehearsal (simulated: the recorded synthetic hash), once. */
  private async settleDelivered(row: PaymentRow): Promise<SettlementOutcome> {
    if (row.status !== "delivered") return this.waitForOutcome(row.id);
    const set = { settled_at: this.opts.now() };
    const done = await store.settleWithEvent(this.opts.db, row.id, ["delivered"], set, paymentSettledEvent({ ...row, ...set, status: "settled" }, true));
    if (!done) return this.waitForOutcome(row.id);
    this.opts.onCommitted();
    return { kind: "settled", row: done, redelivered: false };
  }

  /** A test-mode series runs on the wall clock; nothing is on a chain. */
  seriesChain(network: string): SeriesChain | undefined {
    if (!this.families.some((f) => f.rail.network === network && f.rail.seriesDaySeconds !== undefined)) return undefined;
    return { now: async () => BigInt(Math.floor(this.opts.now().getTime() / 1000)) };
  }

  /** A test-mode held period (ADR 20): settled simulated with its event in one statement, once per (schedule, period). */
  async chargeHeld(row: PaymentRow): Promise<SettlementOutcome> {
    const settled = { ...row, status: "settled" as const, tx_hash: syntheticTxHash(row.network, row.payer, row.nonce), settled_at: this.opts.now() };
    if (await store.insertSettledWithEvent(this.opts.db, settled, paymentSettledEvent(settled, true))) {
      this.opts.onCommitted();
      return { kind: "settled", row: settled, redelivered: false };
    }
    const winner = await store.findSeriesPeriod(this.opts.db, row.schedule_id ?? "", row.schedule_period ?? -1);
    if (!winner) throw new ProblemError("internal", "The period could not be recorded.");
    return { kind: "settled", row: winner, redelivered: true };
  }

  /**
   * Rehearsal relay payments a crash or a timeout left claimed or delivered:
   * released once their buyer's request can no longer be answered (ADR 9);
   * until then they are their request's to finish.
   */
  async sweep(limit = 50): Promise<number> {
    const step = this.opts.paidOnDelivery;
    if (!step) return 0;
    const rows = await store.unfinished(this.opts.db, true, new Date(this.opts.now().getTime() - SWEEP_QUIET_MS), limit);
    for (const row of rows) await step.releaseIfUnanswered(row);
    return rows.length;
  }

  private paidOnDelivery(): PaidOnDelivery {
    if (!this.opts.paidOnDelivery) throw new ProblemError("unavailable", "Relay checkouts cannot be paid here: no fulfillment service is configured.");
    return this.opts.paidOnDelivery;
  }

  /** A payment already recorded: its outcome (a relay one with its recorded answer), once it has one. */
  private async redeliver(family: RehearsalFamily, existing: PaymentRow, checkoutId: string, payload: AnyPaymentPayload): Promise<SettlementOutcome> {
    family.assertRedeliverable(existing, checkoutId, payload);
    const outcome = existing.status === "settled" ? { kind: "settled" as const, row: existing, redelivered: true } : await this.waitForOutcome(existing.id);
    if (outcome.kind !== "settled") return outcome;
    const delivery = await this.opts.paidOnDelivery?.recorded(outcome.row);
    return { ...outcome, redelivered: true, ...(delivery ? { delivery } : {}) };
  }

  /** Waits while another request delivers and settles a relay rehearsal (its origin may take up to 30 s). */
  private async waitForOutcome(id: string): Promise<SettlementOutcome> {
    for (;;) {
      const row = await store.findById(this.opts.db, id);
      if (!row) throw releasedMeanwhile();
      if (row.status === "settled") return { kind: "settled", row, redelivered: true };
      if (row.status === "failed") throw new ProblemError("conflict", "This rehearsal payment did not settle.");
      // The request that claimed it can no longer be answered (it crashed, or timed out): released, never settled.
      if (await this.paidOnDelivery().releaseIfUnanswered(row)) throw releasedMeanwhile();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** The synthetic transaction hash of a rehearsal (ADR 5): derived from what identifies the payment, valid on no chain. */
function rehearsalTxHash(key: AuthorizationKey): string {
  return syntheticTxHash(key.network, key.payer, key.nonce);
}
