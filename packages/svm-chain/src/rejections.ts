/**
 * Why an exact SVM payment is refused. Where the official 2.27 facilitator
 * (`@x402/svm` exact/facilitator) has a code for the case, it is that code, so
 * a client sees the reason it would get from any x402 facilitator; the few
 * marked "c402" are rules of ours the official one does not have.
 */
export const SvmRejection = {
  couldNotBeDecoded: "invalid_exact_svm_payload_transaction_could_not_be_decoded",
  /** c402: v0 messages that load accounts from address lookup tables are refused, not resolved. */
  addressLookupTables: "invalid_exact_svm_payload_address_lookup_tables_unsupported",
  feePayerNotManaged: "invalid_exact_svm_fee_payer_not_managed_by_facilitator",
  feePayerMismatch: "invalid_exact_svm_fee_payer_mismatch",
  /** c402: the fee payer appears in an instruction (as an account or as the program). */
  feePayerNotIsolated: "invalid_exact_svm_payload_fee_payer_not_isolated",
  feePayerTransferringFunds: "invalid_exact_svm_payload_transaction_fee_payer_transferring_funds",
  excessiveSigners: "invalid_exact_svm_payload_excessive_signers",
  signatureInvalid: "invalid_exact_svm_payload_signature_invalid",
  instructionsLength: "invalid_exact_svm_payload_transaction_instructions_length",
  computeLimitInstruction: "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction",
  computeLimitTooHigh: "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high",
  computePriceInstruction: "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction",
  computePriceTooHigh: "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high",
  noTransferInstruction: "invalid_exact_svm_payload_no_transfer_instruction",
  mintMismatch: "invalid_exact_svm_payload_mint_mismatch",
  recipientMismatch: "invalid_exact_svm_payload_recipient_mismatch",
  amountMismatch: "invalid_exact_svm_payload_amount_mismatch",
  /** c402: a payment of several transfers (prepared by the service) moves them all from one account, under one authority. */
  transfersFromSeveralPayers: "invalid_exact_svm_payload_transfers_from_several_payers",
  unknownFourthInstruction: "invalid_exact_svm_payload_unknown_fourth_instruction",
  unknownFifthInstruction: "invalid_exact_svm_payload_unknown_fifth_instruction",
  unknownSixthInstruction: "invalid_exact_svm_payload_unknown_sixth_instruction",
  unknownSeventhInstruction: "invalid_exact_svm_payload_unknown_seventh_instruction",
  memoCount: "invalid_exact_svm_payload_memo_count",
  memoMismatch: "invalid_exact_svm_payload_memo_mismatch",
  simulationFailed: "invalid_exact_svm_transaction_simulation_failed",
} as const;

export type SvmRejectionReason = (typeof SvmRejection)[keyof typeof SvmRejection];

/** A payment refused before anything was signed or sent: `reason` is the x402 code, the message a sentence for a person. */
export class SvmPaymentRejected extends Error {
  constructor(
    readonly reason: SvmRejectionReason,
    message: string,
  ) {
    super(message);
    this.name = "SvmPaymentRejected";
  }
}

/**
 * Why the node refused a transaction before landing it (nothing landed: the
 * payer's money did not move), as x402 codes: the verify-time code where the
 * node repeated a verify check, and a c402 settle code for an expired blockhash.
 */
export const SvmSendRefusal = {
  /** The blockhash expired or was never seen: this transaction can never land. */
  blockhashNotFound: "settle_exact_svm_block_height_exceeded",
  /** Preflight simulation failed (the transfer would fail: funds, frozen account, …). */
  simulationFailed: "invalid_exact_svm_transaction_simulation_failed",
  /** A signature did not verify. */
  signatureInvalid: "invalid_exact_svm_payload_signature_invalid",
} as const;

export type SvmSendRefusalReason = (typeof SvmSendRefusal)[keyof typeof SvmSendRefusal];

export class SvmSendRefused extends Error {
  constructor(
    readonly reason: SvmSendRefusalReason,
    message: string,
  ) {
    super(message);
    this.name = "SvmSendRefused";
  }
}
