import { failpoint } from "@c402/failpoints";
import { breakdown, type Breakdown } from "@c402/money";
import { randomBytes } from "node:crypto";
import { checkSolanaAddress } from "@c402/chain-addresses";
import { invalid, ProblemError } from "@c402/problems";
import {
  decodeExactSvmPayment,
  preparedTransfersTransaction,
  SvmPaymentRejected,
  SvmSendRefusal,
  SvmSendRefused,
  USDC_DECIMALS,
  type ExactSvmPayment,
  type ExactSvmRequirement,
  type SvmChain,
} from "@c402/svm-chain";
import { isSvmPayload, requirementTransfers, type AnyPaymentPayload, type PaymentRequirements } from "@c402/x402";
import { paymentSettledEvent } from "../../events/payment-settled";
import { paymentsStore as store, type PaymentRow, type PaymentsDb } from "../../store/payments-store";
import { newPaymentRow, type PresentedPayment } from "../payment-row";
import type { CheckoutForPayment, LiveRail } from "../requirements";
import { paymentRejected, settlementFailed, type RejectReason } from "../verify-payment";
import { answerByOf, releasedMeanwhile, stillDelivering, type PaidOnDelivery } from "./paid-on-delivery";
import type { PurchaseCall, Settlement, SettlementOutcome } from "./settlement";

export interface LiveSvmSettlementOptions {
  db: PaymentsDb;
  /** The Solana networks, by CAIP-2 id. */
  chains: ReadonlyMap<string, SvmChain>;
  subjectSecret: string;
  /** How long a buyer's request waits for the confirmation before answering "pending". */
  settleTimeoutMs: number;
  /** Called after a commit that wrote an outbox event. */
  onCommitted: () => void;
  now: () => Date;
  onSweepError?: (err: unknown, paymentId: string) => void;
  /** The delivery step of relay sales (absent: relay checkouts are not offered on Solana here). */
  paidOnDelivery?: PaidOnDelivery;
}

/** Every saga state a Solana payment can be settled from (a relay sale settles only once delivered). */
const SETTLEABLE: ("claimed" | "delivered" | "settling")[] = ["claimed", "delivered", "settling"];

/**
 * How long a block takes, at the least, on Solana (the cluster's 400 ms slot
 * target; real slots run a little longer): a blockhash's blocks left, times
 * this, is the earliest its transaction can stop landing.
 */
const SOLANA_SLOT_MS = 400;

/**
 * What a buyer pays on Solana (docs/adr/0015-solana-one-transfer.md): the official
 * client signs one transfer to the seller's token account, so one transfer
 * must carry the whole sale. The seller's price moves to the seller; the
 * protocol fee, which a second transfer would carry, is not charged on this
 * rail, and a checkout with a platform cut is not offered on it (the cut could
 * not reach the platform without the service holding it).
 */
export function solanaAmounts(checkout: CheckoutForPayment): Breakdown {
  const price = breakdown(checkout.priceAtomic, { platformFeeBps: checkout.platform?.feeBps ?? 0 });
  return { ...price, feeAmount: 0n, total: price.price };
}

/**
 * The prepared payment of a checkout with a platform cut (ADR 16): two
 * transfers the buyer signs in one transaction, the seller's share to the
 * seller and the cut to the platform's Solana wallet (frozen at create), so
 * the cut reaches the platform without passing through the service.
 * Undefined without a cut, or without either wallet.
 */
export function solanaSplit(checkout: CheckoutForPayment): { payTo: string; transfers: { payTo: string; amount: bigint }[] } | undefined {
  const seller = checkout.payoutAddresses?.solana;
  const platform = checkout.platform?.feeToSolana;
  if (!seller || !platform) return undefined;
  const amounts = solanaAmounts(checkout);
  return {
    payTo: seller,
    transfers: [
      { payTo: seller, amount: amounts.providerAmount },
      { payTo: platform, amount: amounts.platformAmount ?? 0n },
    ],
  };
}
/**
 * Live settlement on Solana (the x402 exact SVM scheme), the same saga as EVM
 * (ADR 8), keyed by the transaction message's hash: claimed -> settling (the
 * co-signed transaction and its signature stored before it is sent) ->
 * settled (receipt and outbox event in one statement) | failed. The buyer's
 * transaction is the payment: the service adds only its fee payer's
 * signature, so the transfer can land once at most, and its signature, known
 * before sending, is where every resumption asks the chain first. A
 * transaction the chain has not seen is sent again while its blockhash is
 * valid, and fails once it can never land.
 */
export class LiveSvmSettlement implements Settlement {
  readonly kind = "onchain" as const;
  readonly family = "solana" as const;
  private readonly db: PaymentsDb;
  /** Built once: every quote reads them. */
  private readonly liveRails: readonly LiveRail[];

  constructor(private readonly opts: LiveSvmSettlementOptions) {
    this.db = opts.db;
    this.liveRails = [...opts.chains.values()].map((chain) => ({
      network: chain.network,
      asset: chain.usdcMint,
      extra: { feePayer: chain.feePayer },
      supportedExtra: { feePayer: chain.feePayer },
      // One transfer to the seller: no platform cut can ride along (docs/adr/0015-solana-one-transfer.md). A relay
      // sale needs the delivery step, which bounds the origin's time by the transaction's blockhash.
      payTo: (checkout) => (checkout.platform || (checkout.relay && !opts.paidOnDelivery) ? undefined : checkout.payoutAddresses?.solana),
      amounts: solanaAmounts,
      // A platform's cut rides in a transaction the service prepares (ADR 16).
      preparedPayment: (checkout) => (checkout.relay && !opts.paidOnDelivery ? undefined : solanaSplit(checkout)),
    }));
  }

  settles(network: string): boolean {
    return this.opts.chains.has(network);
  }

  rails(): readonly LiveRail[] {
    return this.liveRails;
  }

  signers(): readonly string[] {
    return [...new Set([...this.opts.chains.values()].map((c) => c.feePayer))];
  }

  payerOf(payload: AnyPaymentPayload): string | undefined {
    if (!isSvmPayload(payload)) return undefined;
    try {
      return decodeExactSvmPayment(payload.payload.transaction).payer;
    } catch {
      return undefined;
    }
  }

  private chain(network: string): SvmChain {
    const chain = this.opts.chains.get(network);
    if (!chain) throw new ProblemError("unavailable", "This network cannot settle right now.");
    return chain;
  }

  /**
   * The transaction a payer's wallet signs for a requirement this rail
   * issued: its transfers (the one to payTo, or a prepared payment's, ADR 16)
   * from the payer's USDC account, the service's fee payer, a recent
   * blockhash, a random memo (two preparations never share a message).
   * Unsigned; nothing is recorded.
   */
  async prepare(requirement: PaymentRequirements, payer: string): Promise<string> {
    const chain = this.chain(requirement.network);
    const checked = checkSolanaAddress(payer);
    if (!checked.ok || payer === chain.feePayer) {
      throw invalid([{ field: "payer", reason: checked.ok ? "is the service's fee payer, not a buyer" : checked.reason }]);
    }
    const { transfers, payTo, amount } = requirementOf(requirement);
    return preparedTransfersTransaction({
      feePayer: chain.feePayer,
      payer,
      mint: requirement.asset,
      decimals: USDC_DECIMALS,
      transfers: transfers ?? [{ payTo, amount }],
      blockhash: await chain.latestBlockhash(),
      memo: randomBytes(16).toString("hex"),
    });
  }

  /** The checks `submit` makes before it records anything (the transaction's shape, signatures, simulation): nothing is written or sent. */
  async verify(_checkout: CheckoutForPayment, payload: AnyPaymentPayload, requirement: PaymentRequirements): Promise<void> {
    const payment = paymentOf(payload);
    if (await this.isRecorded(payload, requirement))
      throw svmRejected("invalid_exact_svm_payload_transaction_already_used", "This transaction has already been presented.");
    await this.checked(payment, requirement);
  }

  async isRecorded(payload: AnyPaymentPayload, requirement: PaymentRequirements): Promise<boolean> {
    return (await store.findByAuthorization(this.db, keyOf(requirement, paymentOf(payload)))) !== undefined;
  }

  async submit(
    checkout: CheckoutForPayment,
    payload: AnyPaymentPayload,
    requirement: PaymentRequirements,
    call: PurchaseCall = {},
  ): Promise<SettlementOutcome> {
    const payment = paymentOf(payload);
    const existing = await store.findByAuthorization(this.db, keyOf(requirement, payment));
    if (existing) return this.resume(existing, checkout.id);
    try {
      await this.checked(payment, requirement);
    } catch (err) {
      // A duplicate presented while the first copy landed: its simulation now fails (AlreadyProcessed), but it is the recorded payment.
      const recorded = await store.findByAuthorization(this.db, keyOf(requirement, payment));
      if (recorded) return this.resume(recorded, checkout.id);
      throw err;
    }
    const now = this.opts.now();
    const row = newPaymentRow({
      checkout,
      presented: {
        ...svmPresentedPayment(false, checkout, requirement, payment),
        // A relay sale is delivered before it is sent: its origin's time is bounded by when the transaction stops landing.
        ...(checkout.relay ? { validBefore: await this.landsUntil(requirement.network, payment, now) } : {}),
      },
      subjectSecret: this.opts.subjectSecret,
      now,
      handoffId: call.handoffId ?? null,
      // A relay sale settles only while its buyer's request can still be answered (ADR 9).
      ...(checkout.relay ? { answerBy: answerByOf(call.answerBy, now) } : {}),
      saga: { status: "claimed", test_mode: false, tx_hash: null, settled_at: null, split_address: null, single_shot: !checkout.reusable },
    });
    if (!(await store.insertIfNew(this.db, row))) {
      // The transaction is recorded (a duplicate: its outcome), or the single-shot checkout sold to another payment.
      const winner = await store.findByAuthorization(this.db, keyOf(requirement, payment));
      if (!winner) {
        throw new ProblemError("gone", {
          message: "This single-shot checkout has already been paid.",
          help: { fix: "Ask the seller for a new link. You were not charged.", retry_is_safe: false },
        });
      }
      return this.resume(winner, checkout.id);
    }
    failpoint("after-claim");
    if (!checkout.relay) return this.drive(row, payment);
    // Paid only on delivery (ADR 9): the origin answers first, and only a charged answer, recorded, is sent.
    const { row: delivered, delivery } = await this.paidOnDelivery().deliver(row, checkout, call.params ?? {});
    failpoint("after-delivery");
    const outcome = await this.drive(delivered, payment);
    return outcome.kind === "settled" ? { ...outcome, delivery } : outcome;
  }

  /**
   * Unix seconds by which the transaction may stop landing: its blockhash's
   * blocks left at the shortest slot time. A blockhash this node cannot place
   * among its recent blocks counts as expiring now (the delivery step then
   * refuses the sale before calling the origin, nothing kept).
   */
  private async landsUntil(network: string, payment: ExactSvmPayment, now: Date): Promise<bigint> {
    const blocks = await this.chain(network).blocksLeft(payment.blockhash);
    return BigInt(Math.floor((now.getTime() + Number(blocks ?? 0n) * SOLANA_SLOT_MS) / 1000));
  }

  private paidOnDelivery(): PaidOnDelivery {
    if (!this.opts.paidOnDelivery)
      throw new ProblemError("unavailable", "Relay checkouts cannot be paid on Solana here: no fulfillment service is configured.");
    return this.opts.paidOnDelivery;
  }

  /** The rail's checks, as the buyer's problem (nothing recorded, nothing sent). */
  private async checked(payment: ExactSvmPayment, requirement: PaymentRequirements): Promise<void> {
    try {
      await this.chain(requirement.network).verify(payment, requirementOf(requirement));
    } catch (err) {
      if (err instanceof SvmPaymentRejected) throw svmRejected(err.reason as `invalid_exact_svm_${string}`, err.message);
      throw err;
    }
  }

  /**
   * Co-sign (the signed transaction and its signature recorded first), send,
   * wait; pending when the chain does not confirm in time. Signing is
   * deterministic, so a resumed payment records the same transaction again.
   */
  private async drive(claimed: PaymentRow, payment: ExactSvmPayment): Promise<SettlementOutcome> {
    const chain = this.chain(claimed.network);
    let settling = claimed;
    if (claimed.status !== "settling") {
      const { wire, signature } = await chain.cosign(payment);
      const advanced = await store.advance(this.db, claimed.id, ["claimed", "delivered"], { status: "settling", tx_hash: signature, raw_tx: wire });
      // Another request moved it on first: its outcome is this one's.
      if (!advanced) return this.current(claimed.id);
      settling = advanced;
      failpoint("after-sign");
    }
    try {
      await chain.send(settling.raw_tx as string);
      failpoint("after-broadcast");
    } catch (err) {
      if (err instanceof SvmSendRefused) return this.refusedBeforeLanding(settling, chain, err);
      // Unknown whether it reached the chain: the sweep asks, and sends the same transaction again.
      return { kind: "pending", row: settling };
    }
    return this.await(settling, chain, this.opts.settleTimeoutMs);
  }

  /** Waits for the chain's answer on a sent transaction, then concludes (pending when none came in time). */
  private async await(row: PaymentRow, chain: SvmChain, timeoutMs: number): Promise<SettlementOutcome> {
    // A node that does not answer leaves the outcome unknown: pending, for the sweep to ask again.
    const status = await chain.waitFor(row.tx_hash as string, timeoutMs).catch(() => ({ state: "unseen" as const }));
    // Not seen, or in a block not yet confirmed: the sweep asks again.
    if (status.state === "unseen" || status.state === "processed") return { kind: "pending", row };
    failpoint("after-receipt");
    if (status.state === "confirmed") return { kind: "settled", row: await this.finalize(row), redelivered: false };
    await store.advance(this.db, row.id, SETTLEABLE, { status: "failed", failure_reason: "settlement_failed" });
    throw settlementFailed(
      "settlement_failed",
      `The settlement transaction failed on-chain (${status.error}); only its network fee was spent, no USDC moved and no goods were delivered.`,
      row,
    );
  }

  /**
   * The chain refused the transaction before landing it (its blockhash
   * expired, or it no longer simulates: the buyer's funds moved away). It may
   * still have landed from an earlier send: asked first.
   */
  private async refusedBeforeLanding(row: PaymentRow, chain: SvmChain, refusal: SvmSendRefused): Promise<SettlementOutcome> {
    const status = await chain.statusOf(row.tx_hash as string);
    if (status.state !== "unseen") return this.await(row, chain, this.opts.settleTimeoutMs);
    await store.advance(this.db, row.id, SETTLEABLE, { status: "failed", failure_reason: refusal.reason });
    throw settlementFailed(refusal.reason, `The payment cannot settle: ${refusal.message} Nothing was charged.`, row);
  }

  /** Records the confirmed settlement: receipt fields and the outbox event, once, in one statement. */
  private async finalize(row: PaymentRow): Promise<PaymentRow> {
    const set = { settled_at: this.opts.now() };
    // A live row is single-shot exactly when its checkout is not reusable.
    const event = paymentSettledEvent({ ...row, ...set }, !row.single_shot);
    const done = await store.settleWithEvent(this.db, row.id, SETTLEABLE, set, event);
    failpoint("after-ledger-commit");
    if (done) this.opts.onCommitted();
    return done ?? (await store.findById(this.db, row.id)) ?? row;
  }

  /** A transaction presented again: the same message for the same checkout answers the recorded outcome (a relay sale's with its origin's recorded answer). */
  private async resume(existing: PaymentRow, checkoutId: string): Promise<SettlementOutcome> {
    if (existing.checkout_id !== checkoutId)
      throw svmRejected("invalid_exact_svm_payload_transaction_already_used", "This transaction has already paid for something else.");
    const outcome = await this.current(existing.id);
    if (outcome.kind !== "settled") return outcome;
    // The origin is never called twice for one payment.
    const delivery = await this.opts.paidOnDelivery?.recorded(outcome.row);
    return delivery ? { ...outcome, delivery } : outcome;
  }

  /**
   * Where a payment stands, waiting (up to the settle timeout) while another
   * request drives it: a duplicate of an in-flight payment gets its outcome,
   * not a premature "pending".
   */
  private async current(id: string): Promise<SettlementOutcome> {
    const deadline = this.opts.now().getTime() + this.opts.settleTimeoutMs;
    for (;;) {
      const row = await store.findById(this.db, id);
      // Only a relay claim whose delivery was not charged is ever removed.
      if (!row) throw releasedMeanwhile();
      if (row.status === "settled") return { kind: "settled", row, redelivered: true };
      if (row.status === "failed") throw settlementFailed("settlement_failed", "This payment did not settle; nothing was charged.", row);
      const remaining = deadline - this.opts.now().getTime();
      if (row.tx_hash) {
        const outcome = await this.await(row, this.chain(row.network), Math.max(remaining, 1));
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
   * Resumes Solana payments left unfinished by a crash or a timeout, with the
   * chain as the truth: a landed transaction is concluded; one the chain has
   * not seen is sent again while its blockhash is valid (the same signed
   * bytes: it lands once at most), and failed once it never can.
   */
  async sweep(quietMs = 30_000, limit = 50): Promise<number> {
    const networks = [...this.opts.chains.keys()];
    const rows = await store.unfinished(this.db, false, new Date(this.opts.now().getTime() - quietMs), limit, networks);
    for (const row of rows) {
      try {
        await this.sweepOne(row);
      } catch (err) {
        this.opts.onSweepError?.(err, row.id);
      }
    }
    return rows.length;
  }

  private async sweepOne(row: PaymentRow): Promise<void> {
    const chain = this.opts.chains.get(row.network);
    if (!chain) return;
    if ((row.status === "claimed" || row.status === "delivered") && row.fulfillment !== "inline" && row.fulfillment !== "webhook") {
      // Nothing is sent for a relay sale but by the request that delivered it, while its buyer still waits: past
      // that, the claim is released (ADR 9); before, it is that request's to finish.
      await this.opts.paidOnDelivery?.releaseIfUnanswered(row);
      return;
    }
    const payment = decodeExactSvmPayment(String(row.authorization.transaction));
    if (row.status === "claimed") {
      // Claimed, never signed: driven from the start (the checks ran before the claim).
      await this.drive(row, payment).catch(() => undefined);
      return;
    }
    const status = await chain.statusOf(row.tx_hash as string);
    if (status.state !== "unseen") {
      await this.await(row, chain, 1).catch(() => undefined);
      return;
    }
    if (!(await chain.blockhashValid(payment.blockhash))) {
      // Unseen, and its blockhash expired: it can never land. Asked once more, in case it landed meanwhile.
      if ((await chain.statusOf(row.tx_hash as string)).state === "unseen") {
        await store.advance(this.db, row.id, ["settling"], { status: "failed", failure_reason: SvmSendRefusal.blockhashNotFound });
        return;
      }
    }
    await this.drive(row, payment).catch(() => undefined);
  }
}

/** What a refused Solana buyer can do: /prepare serves EVM typed data, so the hint names the SVM client instead. */
const SVM_PREPARE_HINT =
  "On Solana, sign the requirement as it was issued with an x402 SVM client (exact scheme): one USDC transfer to payTo's token account, extra.feePayer as fee payer; /prepare serves EVM typed data only.";

export function svmRejected(reason: RejectReason, message: string) {
  return paymentRejected(reason, message, SVM_PREPARE_HINT);
}

/** The decoded transaction of a Solana payload (a payload of another family, or an undecodable one, is the buyer's problem). */
export function paymentOf(payload: AnyPaymentPayload): ExactSvmPayment {
  if (!isSvmPayload(payload)) throw svmRejected("invalid_payload", "This network takes a Solana transaction, not an authorization.");
  try {
    return decodeExactSvmPayment(payload.payload.transaction);
  } catch (err) {
    if (err instanceof SvmPaymentRejected) throw svmRejected(err.reason as `invalid_exact_svm_${string}`, err.message);
    throw err;
  }
}

/** A Solana payment is identified by its transaction's message (an attacker can vary the unsigned fee-payer slot; never the message). */
export function svmPaymentKey(testMode: boolean, requirement: PaymentRequirements, payment: ExactSvmPayment) {
  return { test_mode: testMode, network: requirement.network, asset: requirement.asset, payer: payment.payer, nonce: payment.messageHash };
}

const keyOf = (requirement: PaymentRequirements, payment: ExactSvmPayment) => svmPaymentKey(false, requirement, payment);

/** A Solana payment as presented: keyed by its message, one transfer of the price to the seller (ADR 15). */
export function svmPresentedPayment(
  testMode: boolean,
  checkout: CheckoutForPayment,
  requirement: PaymentRequirements,
  payment: ExactSvmPayment,
): PresentedPayment {
  return {
    key: svmPaymentKey(testMode, requirement, payment),
    authorization: { transaction: payment.transaction },
    validBefore: null,
    payTo: requirement.payTo,
    // A prepared payment's second transfer is the platform's cut (ADR 16).
    platformFeeTo: requirementTransfers(requirement.extra).length > 1 ? (checkout.platform?.feeToSolana ?? null) : null,
    amounts: solanaAmounts(checkout),
  };
}

/** What the chain adapter checks a payment against, read from the requirement issued. */
export function requirementOf(requirement: PaymentRequirements): ExactSvmRequirement {
  const transfers = requirementTransfers(requirement.extra).map((t) => ({ payTo: t.payTo, amount: BigInt(t.amount) }));
  return {
    payTo: requirement.payTo,
    asset: requirement.asset,
    amount: BigInt(requirement.amount),
    feePayer: String(requirement.extra.feePayer),
    ...(transfers.length > 0 ? { transfers } : {}),
  };
}
