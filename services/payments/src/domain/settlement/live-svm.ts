import { failpoint } from "@c402/failpoints";
import { randomBytes } from "node:crypto";
import { checkSolanaAddress } from "@c402/chain-addresses";
import { invalid } from "@c402/problems";
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
import { paymentsStore as store, type PaymentRow } from "../../store/payments-store";
import type { PresentedPayment } from "../payment-row";
import { singleTransferAmounts, type CheckoutForPayment, type Rail } from "../requirements";
import { paymentRejected, settlementFailed, type RejectReason } from "../verify-payment";
import { OnchainSettlement, SETTLEABLE, type OnchainSettlementOptions } from "./onchain-settlement";
import type { PurchaseCall, Settlement, SettlementOutcome } from "./settlement";

/** The Solana networks, by CAIP-2 id (`chains`), and what every rail's saga needs. */
export type LiveSvmSettlementOptions = OnchainSettlementOptions<SvmChain>;

/**
 * How long a block takes, at the least, on Solana (the cluster's 400 ms slot
 * target; real slots run a little longer): a blockhash's blocks left, times
 * this, is the earliest its transaction can stop landing.
 */
const SOLANA_SLOT_MS = 400;

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
  const amounts = singleTransferAmounts(checkout);
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
export class LiveSvmSettlement extends OnchainSettlement<SvmChain> implements Settlement {
  readonly family = "solana" as const;
  /** Built once: every quote reads them. */
  private readonly liveRails: readonly Rail[];

  constructor(private readonly opts: LiveSvmSettlementOptions) {
    super(opts);
    this.liveRails = [...opts.chains.values()].map((chain) => ({
      network: chain.network,
      asset: chain.usdcMint,
      extra: { feePayer: chain.feePayer },
      supportedExtra: { feePayer: chain.feePayer },
      // One transfer to the seller: no platform cut can ride along (docs/adr/0015-solana-one-transfer.md). A relay
      // sale needs the delivery step, which bounds the origin's time by the transaction's blockhash.
      payTo: (checkout) => (checkout.platform || (checkout.relay && !opts.paidOnDelivery) ? undefined : checkout.payoutAddresses?.solana),
      amounts: singleTransferAmounts,
      // A platform's cut rides in a transaction the service prepares (ADR 16).
      preparedPayment: (checkout) => (checkout.relay && !opts.paidOnDelivery ? undefined : solanaSplit(checkout)),
    }));
  }

  rails(): readonly Rail[] {
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
    // A copy presented while the first landed fails its simulation (AlreadyProcessed): it answers the recorded payment.
    return this.settleOnce(checkout, call, {
      key: keyOf(requirement, payment),
      check: () => this.checked(payment, requirement),
      presented: async () => ({
        ...svmPresentedPayment(false, checkout, requirement, payment),
        // A relay sale is delivered before it is sent: its origin's time is bounded by when the transaction stops landing.
        ...(checkout.relay ? { validBefore: await this.landsUntil(requirement.network, payment, this.opts.now()) } : {}),
      }),
      resume: (recorded) => this.resume(recorded, checkout.id),
      drive: (row) => this.drive(row, payment),
    });
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

  /** A transaction presented again: the same message for the same checkout answers the recorded outcome. */
  private resume(existing: PaymentRow, checkoutId: string): Promise<SettlementOutcome> {
    if (existing.checkout_id !== checkoutId)
      throw svmRejected("invalid_exact_svm_payload_transaction_already_used", "This transaction has already paid for something else.");
    return this.redeliver(existing);
  }

  protected outcomeOfSent(row: PaymentRow, timeoutMs: number): Promise<SettlementOutcome> {
    return this.await(row, this.chain(row.network), timeoutMs);
  }

  /**
   * Resumes Solana payments left unfinished by a crash or a timeout, with the
   * chain as the truth: a landed transaction is concluded; one the chain has
   * not seen is sent again while its blockhash is valid (the same signed
   * bytes: it lands once at most), and failed once it never can.
   */
  protected async sweepOne(row: PaymentRow): Promise<void> {
    const chain = this.chain(row.network);
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
  "On Solana, sign the requirement as it was issued with an x402 SVM client (exact scheme): one USDC transfer to payTo's token account, extra.feePayer as fee payer. A checkout with a platform cut is sold through the face's /prepare with {payer, network}: it returns the transaction to sign.";

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
    amounts: singleTransferAmounts(checkout),
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
