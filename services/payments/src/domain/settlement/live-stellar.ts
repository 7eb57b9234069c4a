import { failpoint } from "@c402/failpoints";
import {
  payerAuthEntry,
  stellarUnitsFromUsdc,
  StellarPaymentRejected,
  StellarSendRefused,
  type ExactStellarPayment,
  type ExactStellarRequirement,
  type StellarChain,
  type StellarTransactionStatus,
} from "@c402/stellar-chain";
import { isStellarPayload, type AnyPaymentPayload, type PaymentRequirements } from "@c402/x402";
import { paymentsStore as store, type PaymentRow } from "../../store/payments-store";
import type { PresentedPayment } from "../payment-row";
import { MAX_TIMEOUT_SECONDS, singleTransferAmounts, type CheckoutForPayment, type Rail } from "../requirements";
import { paymentRejected, settlementFailed, type RejectReason } from "../verify-payment";
import { OnchainSettlement, SETTLEABLE, type OnchainSettlementOptions } from "./onchain-settlement";
import type { PurchaseCall, Settlement, SettlementOutcome } from "./settlement";

/** The Stellar networks, by CAIP-2 id (`chains`), and what every rail's saga needs. */
export type LiveStellarSettlementOptions = OnchainSettlementOptions<StellarChain>;

/** How many settlement transactions one payment may be given in one drive (a new one only when the last can never land). */
const MAX_SETTLEMENT_TRANSACTIONS = 2;

/** Thrown inside a drive when another request moved the payment on first: its outcome is this one's. */
class MovedOnMeanwhile extends Error {}

/**
 * Live settlement on Stellar (the x402 exact Stellar scheme, ADR 17), the
 * saga every rail shares, keyed by the payer's authorization (its address
 * and nonce, which the token contract consumes once): claimed -> settling
 * (each settlement transaction, built with the service's account or a
 * channel as source, recorded before it is sent) -> settled | failed. The
 * buyer's signed authorization is the payment: a second transaction carrying
 * it cannot move the money twice (its nonce is spent by the first that
 * lands), so a transaction that can never land (its sequence number taken)
 * is replaced while the authorization is still good, and the payment fails
 * once it is not.
 */
export class LiveStellarSettlement extends OnchainSettlement<StellarChain> implements Settlement {
  readonly family = "stellar" as const;
  /** Built once: every quote reads them. */
  private readonly stellarRails: readonly Rail[];

  constructor(private readonly opts: LiveStellarSettlementOptions) {
    super(opts);
    this.stellarRails = [...opts.chains.values()].map((chain) => ({
      network: chain.network,
      asset: chain.usdcContract,
      // The service submits and pays the fee: the official client then leaves the transaction's source to us.
      extra: { areFeesSponsored: true },
      supportedExtra: { areFeesSponsored: true },
      // One transfer to the seller, as on Solana (ADR 17): no platform cut can ride along. A relay sale needs the
      // delivery step, which bounds the origin's time by when the buyer's authorization stops being usable.
      payTo: (checkout) => (checkout.platform || (checkout.relay && !opts.paidOnDelivery) ? undefined : checkout.payoutAddresses?.stellar),
      amounts: singleTransferAmounts,
      tokenUnits: stellarUnitsFromUsdc,
    }));
  }

  rails(): readonly Rail[] {
    return this.stellarRails;
  }

  /** The service's accounts of every network: the settlement sources and the fee payer. */
  signers(): readonly string[] {
    return [...new Set([...this.opts.chains.values()].flatMap((c) => c.serviceAccounts))];
  }

  payerOf(payload: AnyPaymentPayload): string | undefined {
    if (!isStellarPayload(payload)) return undefined;
    const chain = this.opts.chains.get(payload.accepted?.network ?? "") ?? [...this.opts.chains.values()][0];
    try {
      return chain?.decode(payload.payload.transaction).payer;
    } catch {
      return undefined;
    }
  }

  /** The checks `submit` makes before it records anything (the transaction's shape, the payer's signature, a simulation): nothing is written or sent. */
  async verify(_checkout: CheckoutForPayment, payload: AnyPaymentPayload, requirement: PaymentRequirements): Promise<void> {
    const payment = this.paymentOf(payload, requirement.network);
    // Decoded once: the key is read from the same payment the checks see.
    if ((await store.findByAuthorization(this.db, stellarPaymentKey(requirement, payment))) !== undefined) {
      throw stellarRejected("invalid_exact_stellar_payload_authorization_already_used", "This authorization has already been presented.");
    }
    await this.checked(payment, requirement);
  }

  async isRecorded(payload: AnyPaymentPayload, requirement: PaymentRequirements): Promise<boolean> {
    return (await store.findByAuthorization(this.db, stellarPaymentKey(requirement, this.paymentOf(payload, requirement.network)))) !== undefined;
  }

  async submit(
    checkout: CheckoutForPayment,
    payload: AnyPaymentPayload,
    requirement: PaymentRequirements,
    call: PurchaseCall = {},
  ): Promise<SettlementOutcome> {
    const payment = this.paymentOf(payload, requirement.network);
    // A copy presented after the first settled fails its simulation (the nonce is spent): it answers the recorded payment.
    return this.settleOnce(checkout, call, {
      key: stellarPaymentKey(requirement, payment),
      check: () => this.checked(payment, requirement),
      presented: async () => ({
        ...stellarPresentedPayment(checkout, requirement, payment),
        // A relay sale is delivered before it is sent: its origin's time is bounded by when the authorization stops being usable.
        ...(checkout.relay ? { validBefore: await this.usableUntil(requirement.network, payment) } : {}),
      }),
      resume: (recorded) => this.resume(recorded, checkout.id),
      drive: (row) => this.drive(row, payment),
    });
  }

  /**
   * Unix seconds by which a settlement carrying the payer's authorization
   * must be sent to land: the close of the ledger before its signature
   * expiration ledger, at the earliest (`StellarChain.sendBy`). A relay sale's
   * `valid_before`: ADR 9's deadlines follow from it (the delivery step
   * refuses, before calling the origin and with nothing kept, an
   * authorization that leaves too little time).
   */
  private async usableUntil(network: string, payment: ExactStellarPayment): Promise<bigint> {
    const expiration = payerAuthEntry(payment)?.signatureExpirationLedger;
    if (expiration === undefined) return 0n;
    return BigInt(Math.floor((await this.chain(network).sendBy(expiration, this.opts.now().getTime())) / 1000));
  }

  /** The decoded transaction of a Stellar payload (a payload of another family, or an undecodable one, is the buyer's problem). */
  private paymentOf(payload: AnyPaymentPayload, network: string): ExactStellarPayment {
    if (!isStellarPayload(payload)) throw stellarRejected("invalid_payload", "This network takes a Stellar transaction, not an authorization.");
    try {
      return this.chain(network).decode(payload.payload.transaction);
    } catch (err) {
      if (err instanceof StellarPaymentRejected) throw stellarRejected(err.reason, err.message);
      throw err;
    }
  }

  /** The rail's checks, as the buyer's problem (nothing recorded, nothing sent). */
  private async checked(payment: ExactStellarPayment, requirement: PaymentRequirements): Promise<void> {
    try {
      await this.chain(requirement.network).verify(payment, requirementOf(requirement));
    } catch (err) {
      if (err instanceof StellarPaymentRejected) throw stellarRejected(err.reason, err.message);
      throw err;
    }
  }

  /**
   * Settles a claimed (or settling) payment: the chain verifies it again,
   * builds and signs a settlement transaction, which is recorded (`settling`,
   * its hash and bytes) before it is sent, then follows it. Pending when the
   * network has not answered within the settle timeout.
   */
  private async drive(claimed: PaymentRow, payment: ExactStellarPayment, transactions = 1): Promise<SettlementOutcome> {
    const chain = this.chain(claimed.network);
    let row = claimed;
    let status: StellarTransactionStatus;
    try {
      ({ status } = await chain.settle(payment, requirementOfRow(row), {
        timeoutMs: this.opts.settleTimeoutMs,
        beforeSend: async (signed) => {
          const from: PaymentRow["status"][] = row.status === "settling" ? ["settling"] : ["claimed", "delivered"];
          const advanced = await store.advance(this.db, row.id, from, { status: "settling", tx_hash: signed.hash, raw_tx: signed.xdr });
          if (!advanced) throw new MovedOnMeanwhile();
          row = advanced;
          failpoint("after-sign");
        },
        // Sent and taken by the network, not yet followed: the sweep finds it by its recorded bytes.
        afterSend: () => failpoint("after-broadcast"),
      }));
    } catch (err) {
      if (err instanceof MovedOnMeanwhile) return this.current(claimed.id);
      if (err instanceof StellarPaymentRejected) return this.refused(row, err.reason, err.message);
      if (err instanceof StellarSendRefused) return this.refused(row, err.reason, err.message);
      // The network could not be asked: whatever was recorded is the sweep's to follow.
      if (row.status === "settling") return { kind: "pending", row };
      throw err;
    }
    failpoint("after-receipt");
    // Outside the try: a settlement that failed on the network is the buyer's answer, never "pending".
    return this.conclude(row, status, payment, transactions);
  }

  /**
   * The payment can no longer settle as it stands (its authorization expired,
   * the payer's funds moved away, the network refused every transaction):
   * nothing moved. An earlier transaction of it may still have landed: asked
   * first.
   */
  private async refused(row: PaymentRow, reason: string, message: string): Promise<SettlementOutcome> {
    if (row.raw_tx) {
      const status = await this.chain(row.network).status(row.raw_tx);
      if (status.state === "success") return { kind: "settled", row: await this.finalize(row), redelivered: false };
      if (status.state === "unseen" && status.canStillLand) return { kind: "pending", row };
    }
    await store.advance(this.db, row.id, SETTLEABLE, { status: "failed", failure_reason: reason });
    throw settlementFailed(reason as RejectReason, `The payment cannot settle: ${message} Nothing was charged.`, row);
  }

  /** Acts on where a sent settlement stands; one that can never land is replaced while the authorization holds. */
  private async conclude(row: PaymentRow, status: StellarTransactionStatus, payment?: ExactStellarPayment, transactions = 1): Promise<SettlementOutcome> {
    if (status.state === "success") return { kind: "settled", row: await this.finalize(row), redelivered: false };
    if (status.state === "failed") {
      await store.advance(this.db, row.id, SETTLEABLE, { status: "failed", failure_reason: "settlement_failed" });
      throw settlementFailed(
        "settlement_failed",
        `The settlement transaction failed on the network (${status.error}); only its network fee was spent, no USDC moved and no goods were delivered.`,
        row,
      );
    }
    if (status.canStillLand) return { kind: "pending", row };
    // Never lands, and moved nothing: another transaction may carry the authorization while it holds (its nonce makes one transfer at most).
    if (payment && transactions < MAX_SETTLEMENT_TRANSACTIONS && (await this.authorizationHolds(row.network, payment))) {
      return this.drive(row, payment, transactions + 1);
    }
    return this.refused({ ...row, raw_tx: null }, "settle_exact_stellar_transaction_expired", `its settlement can no longer land (${status.reason}).`);
  }

  /** Whether the payer's authorization can still be used: its last ledger is not closed. */
  private async authorizationHolds(network: string, payment: ExactStellarPayment): Promise<boolean> {
    const expiration = payerAuthEntry(payment)?.signatureExpirationLedger;
    return expiration !== undefined && (await this.chain(network).latestLedger()) < expiration;
  }

  /** A transaction presented again: the same authorization for the same checkout answers the recorded outcome. */
  private resume(existing: PaymentRow, checkoutId: string): Promise<SettlementOutcome> {
    if (existing.checkout_id !== checkoutId) {
      throw stellarRejected("invalid_exact_stellar_payload_authorization_already_used", "This authorization has already paid for something else.");
    }
    return this.redeliver(existing);
  }

  protected async outcomeOfSent(row: PaymentRow, timeoutMs: number): Promise<SettlementOutcome> {
    // A network that does not answer leaves the outcome unknown: pending, for the sweep to ask again.
    const status = await this.chain(row.network)
      .waitFor(row.raw_tx as string, timeoutMs)
      .catch((): StellarTransactionStatus => ({ state: "unseen", canStillLand: true }));
    // The sweep decides what to do with a transaction that can never land (it may replace it).
    if (status.state === "unseen") return { kind: "pending", row };
    return this.conclude(row, status);
  }

  /**
   * Resumes a Stellar payment left unfinished, with the network as the
   * truth: a claimed one is driven from the start (the checks run again); a
   * settling one's recorded transaction is sent again and followed, then
   * concluded (replaced if it can never land while the authorization holds).
   */
  protected async sweepOne(row: PaymentRow): Promise<void> {
    const chain = this.chain(row.network);
    const payment = chain.decode(String(row.authorization.transaction));
    if (row.status !== "settling" || !row.raw_tx) {
      await this.drive(row, payment).catch(() => undefined);
      return;
    }
    const status = await chain.resume(row.raw_tx, this.opts.settleTimeoutMs);
    await this.conclude(row, status, payment).catch(() => undefined);
  }
}

/** What a refused Stellar buyer should sign instead: /prepare has nothing for Stellar (the client builds its own transaction). */
const STELLAR_PREPARE_HINT =
  "On Stellar, sign the requirement as it was issued with an x402 Stellar client (exact scheme, e.g. @x402/stellar): one authorization of a USDC transfer to payTo; the service submits the transaction and pays its fee (extra.areFeesSponsored). /prepare prepares nothing for Stellar.";

/** A refusal of a Stellar payment, as the buyer's problem. */
export function stellarRejected(reason: RejectReason, message: string) {
  return paymentRejected(reason, message, STELLAR_PREPARE_HINT);
}

/** A Stellar payment is identified by its payer's authorization: the payer and the nonce the token contract consumes once. */
export function stellarPaymentKey(requirement: PaymentRequirements, payment: ExactStellarPayment) {
  const nonce = payerAuthEntry(payment)?.nonce;
  if (nonce === undefined)
    throw stellarRejected("invalid_exact_stellar_payload_missing_payer_signature", "The payer has not signed an authorization for the transfer.");
  return { test_mode: false, network: requirement.network, asset: requirement.asset, payer: payment.payer, nonce: nonce.toString() };
}

/** A Stellar payment as presented: keyed by the payer's authorization, one transfer of the price to the seller (ADR 17). */
export function stellarPresentedPayment(checkout: CheckoutForPayment, requirement: PaymentRequirements, payment: ExactStellarPayment): PresentedPayment {
  return {
    key: stellarPaymentKey(requirement, payment),
    authorization: { transaction: payment.transaction },
    validBefore: null,
    payTo: requirement.payTo,
    platformFeeTo: null,
    amounts: singleTransferAmounts(checkout),
  };
}

/** What the chain adapter checks a payment against, read from the requirement issued (amount in the token's 7 decimals). */
export function requirementOf(requirement: PaymentRequirements): ExactStellarRequirement {
  return { payTo: requirement.payTo, asset: requirement.asset, amount: BigInt(requirement.amount), maxTimeoutSeconds: requirement.maxTimeoutSeconds };
}

/** The same, read back from a recorded payment (its total is the one transfer, in the service's 6 decimals). */
function requirementOfRow(row: PaymentRow): ExactStellarRequirement {
  return { payTo: row.pay_to, asset: row.asset, amount: stellarUnitsFromUsdc(BigInt(row.total)), maxTimeoutSeconds: MAX_TIMEOUT_SECONDS };
}
