/**
 * Why an exact Stellar payment is refused. Where the official 2.9 facilitator
 * (`@x402/stellar` exact/facilitator) has a code for the case, it is that
 * code, so a client sees the reason it would get from any x402 facilitator;
 * the ones marked "c402" are rules of ours the official one does not have.
 */
export const StellarRejection = {
  malformed: "invalid_exact_stellar_payload_malformed",
  wrongOperation: "invalid_exact_stellar_payload_wrong_operation",
  unsafeSource: "invalid_exact_stellar_payload_unsafe_tx_or_op_source",
  wrongAsset: "invalid_exact_stellar_payload_wrong_asset",
  wrongFunctionName: "invalid_exact_stellar_payload_wrong_function_name",
  facilitatorIsPayer: "invalid_exact_stellar_payload_facilitator_is_payer",
  wrongRecipient: "invalid_exact_stellar_payload_wrong_recipient",
  wrongAmount: "invalid_exact_stellar_payload_wrong_amount",
  simulationFailed: "invalid_exact_stellar_payload_simulation_failed",
  feeBelowMinimum: "invalid_exact_stellar_payload_fee_below_minimum",
  feeExceedsMaximum: "invalid_exact_stellar_payload_fee_exceeds_maximum",
  eventNotTransfer: "invalid_exact_stellar_payload_event_not_transfer",
  eventMissingContractId: "invalid_exact_stellar_payload_event_missing_contract_id",
  eventWrongAsset: "invalid_exact_stellar_payload_event_wrong_asset",
  noTransferEvents: "invalid_exact_stellar_payload_no_transfer_events",
  multipleTransfers: "invalid_exact_stellar_payload_multiple_transfers",
  eventWrongFrom: "invalid_exact_stellar_payload_event_wrong_from",
  eventWrongTo: "invalid_exact_stellar_payload_event_wrong_to",
  eventWrongAmount: "invalid_exact_stellar_payload_event_wrong_amount",
  noAuthEntries: "invalid_exact_stellar_payload_no_auth_entries",
  unsupportedCredentialType: "invalid_exact_stellar_payload_unsupported_credential_type",
  facilitatorInAuth: "invalid_exact_stellar_payload_facilitator_in_auth",
  expirationTooFar: "invalid_exact_stellar_signature_expiration_too_far",
  hasSubinvocations: "invalid_exact_stellar_payload_has_subinvocations",
  missingPayerSignature: "invalid_exact_stellar_payload_missing_payer_signature",
  unexpectedPendingSignatures: "invalid_exact_stellar_payload_unexpected_pending_signatures",
  /** c402: the payer's authorization has expired (its last ledger is closed), so the transfer could only fail. */
  signatureExpired: "invalid_exact_stellar_signature_expired",
  /** c402: an authorization entry besides the payer's (signed, or for another address). */
  unexpectedAuthEntries: "invalid_exact_stellar_payload_unexpected_auth_entries",
  /** c402: the payer's entry authorizes another call than the transaction's transfer. */
  authInvocationMismatch: "invalid_exact_stellar_payload_auth_invocation_mismatch",
  /** c402: the payer's (account) signature does not verify over the entry for this network. */
  signatureInvalid: "invalid_exact_stellar_payload_signature_invalid",
  /** c402: the simulated transaction reads or writes a ledger entry of the service's accounts. */
  facilitatorInFootprint: "invalid_exact_stellar_payload_facilitator_in_footprint",
} as const;

export type StellarRejectionReason = (typeof StellarRejection)[keyof typeof StellarRejection];

/** A payment refused before anything was signed or sent: `reason` is the x402 code, the message a sentence for a person. */
export class StellarPaymentRejected extends Error {
  constructor(
    readonly reason: StellarRejectionReason,
    message: string,
  ) {
    super(message);
    this.name = "StellarPaymentRejected";
  }
}

/**
 * Why the network refused a settlement transaction at submission (nothing was
 * applied: no fee taken, the payer's money did not move, the source's
 * sequence number not used).
 */
export const StellarSendRefusal = {
  /** c402: the source's sequence number moved on (used by another transaction): rebuild with a fresh one. */
  badSequence: "settle_exact_stellar_bad_sequence",
  /** c402: its ledger or time bounds have passed: it can never land. */
  expired: "settle_exact_stellar_transaction_expired",
  /** Any other refusal (fee too low, signatures, balance…): the official settle's code. */
  submissionFailed: "settle_exact_stellar_transaction_submission_failed",
} as const;

export type StellarSendRefusalReason = (typeof StellarSendRefusal)[keyof typeof StellarSendRefusal];

export class StellarSendRefused extends Error {
  constructor(
    readonly reason: StellarSendRefusalReason,
    /** The network's result code, e.g. `txBadSeq` (a fee bump's followed by its inner transaction's: `txFeeBumpInnerFailed: txBadSeq`). */
    readonly resultCode: string,
    message: string,
  ) {
    super(message);
    this.name = "StellarSendRefused";
  }
}
