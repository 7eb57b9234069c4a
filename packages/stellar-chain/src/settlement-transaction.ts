import { Account, FeeBumpTransaction, Keypair, Operation, TimeoutInfinite, Transaction, TransactionBuilder, xdr } from "@stellar/stellar-sdk";
import { payerAuthEntry } from "./checks";
import type { ExactStellarPayment } from "./decode";
import { StellarPaymentRejected, StellarRejection } from "./rejections";

/** A settlement transaction, built and signed, not yet sent: what the saga stores before sending. */
export interface SignedSettlement {
  /** Base64 XDR of the envelope to send (the fee bump's when there is one). */
  xdr: string;
  /** Its hash (64 hex): the id `getTransaction` knows it by. */
  hash: string;
  /** The account whose sequence number it uses, and that number. */
  source: string;
  sequence: bigint;
  /** Who pays the fee (the source, or the fee-bump payer) and the most it pays, in stroops. */
  feeSource: string;
  fee: bigint;
  /** The ledgers it can land in: from minLedger to maxLedger - 1 (the payer's authorization's last ledger). */
  minLedger: number;
  maxLedger: number;
}

export interface SettlementBuild {
  payment: ExactStellarPayment;
  /** The account the transaction is from (the service's, or a channel) and its current sequence number: the transaction uses the next. */
  source: Keypair;
  sequence: bigint;
  /** Pays the fee in a fee bump around it (the service's account when channels are the sources). */
  feeBump?: Keypair;
  /** The resources, footprint and resource fee from the settlement's own simulation (never the payload's). */
  sorobanData: xdr.SorobanTransactionData;
  /** Stroops bid per operation for inclusion. */
  inclusionFee: bigint;
  /** The latest closed ledger when built: the earliest it may land in. */
  latestLedger: number;
  /** Every account of the service's, none of which the payment may name. */
  serviceAccounts: readonly string[];
  maxFee: bigint;
  networkPassphrase: string;
}

/**
 * The settlement transaction of a checked payment: the service's source (its
 * own sequence number) and fee, the payment's contract call and authorization
 * entries copied and nothing else of the payload (no operation source, memo
 * or preconditions), resources from our simulation, valid from the latest
 * ledger until the payer's authorization expires (ledger bounds: it can
 * never land after it could only fail), signed by the source and, when
 * configured, wrapped in a fee bump the fee payer signs. Refuses, whatever
 * the caller checked, a payment that names the service's accounts or a fee
 * above the cap.
 */
export function buildSettlementTransaction(build: SettlementBuild): SignedSettlement {
  const { payment } = build;
  assertServiceIsolated(payment, build.serviceAccounts);
  const payer = payerAuthEntry(payment);
  if (!payer?.signed) throw new StellarPaymentRejected(StellarRejection.missingPayerSignature, "The payer has not signed an authorization for the transfer.");
  const bounds = { minLedger: build.latestLedger, maxLedger: payer.signatureExpirationLedger! + 1 };

  const inner = new TransactionBuilder(new Account(build.source.publicKey(), build.sequence.toString()), {
    fee: build.inclusionFee.toString(),
    networkPassphrase: build.networkPassphrase,
    ledgerbounds: bounds,
    sorobanData: build.sorobanData,
  })
    .setTimeout(TimeoutInfinite)
    .addOperation(Operation.invokeHostFunction({ func: payment.hostFunction, auth: payment.authEntries.map((a) => a.entry) }))
    .build();
  inner.sign(build.source);

  let envelope: Transaction | FeeBumpTransaction = inner;
  if (build.feeBump) {
    envelope = TransactionBuilder.buildFeeBumpTransaction(build.feeBump, build.inclusionFee.toString(), inner, build.networkPassphrase);
    envelope.sign(build.feeBump);
  }
  const fee = BigInt(envelope.fee);
  if (fee > build.maxFee) {
    throw new StellarPaymentRejected(StellarRejection.feeExceedsMaximum, `Settling would cost ${fee} stroops; at most ${build.maxFee} are paid.`);
  }
  return {
    xdr: envelope.toXDR(),
    hash: envelope.hash().toString("hex"),
    source: build.source.publicKey(),
    sequence: build.sequence + 1n,
    feeSource: (build.feeBump ?? build.source).publicKey(),
    fee,
    ...bounds,
  };
}

/**
 * None of the service's accounts is the payer or authorizes anything, and no
 * entry uses source-account credentials (the settlement's source is ours):
 * what keeps the service's signature to the fee. Checked again before
 * signing, whether or not `checkExactStellarPayment` ran.
 */
export function assertServiceIsolated(payment: ExactStellarPayment, serviceAccounts: readonly string[]): void {
  const service = new Set(serviceAccounts);
  if (service.has(payment.payer)) throw new StellarPaymentRejected(StellarRejection.facilitatorIsPayer, "The transfer's from is the facilitator's account.");
  for (const entry of payment.authEntries) {
    if (entry.credentials !== "address") {
      throw new StellarPaymentRejected(StellarRejection.unsupportedCredentialType, "An authorization entry uses source-account credentials.");
    }
    if (service.has(entry.address!)) throw new StellarPaymentRejected(StellarRejection.facilitatorInAuth, "An authorization entry is the facilitator's.");
  }
}
