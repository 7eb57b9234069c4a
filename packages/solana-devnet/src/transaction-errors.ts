import {
  InstructionErrorBorshIo,
  InstructionErrorCustom,
  TransactionErrorDuplicateInstruction,
  TransactionErrorInstructionError,
  TransactionErrorInsufficientFundsForRent,
  TransactionErrorProgramExecutionTemporarilyRestricted,
  type FailedTransactionMetadata,
} from "litesvm/dist/internal";

/** A transaction error as a validator writes it in JSON (serde's form of agave's TransactionError). */
export type TransactionErrorJson = string | Record<string, unknown>;

// litesvm hands fieldless variants over as the numbers of its const enums (litesvm/dist/internal.d.ts), in this order.
const TRANSACTION_ERRORS = [
  "AccountInUse",
  "AccountLoadedTwice",
  "AccountNotFound",
  "ProgramAccountNotFound",
  "InsufficientFundsForFee",
  "InvalidAccountForFee",
  "AlreadyProcessed",
  "BlockhashNotFound",
  "CallChainTooDeep",
  "MissingSignatureForFee",
  "InvalidAccountIndex",
  "SignatureFailure",
  "InvalidProgramForExecution",
  "SanitizeFailure",
  "ClusterMaintenance",
  "AccountBorrowOutstanding",
  "WouldExceedMaxBlockCostLimit",
  "UnsupportedVersion",
  "InvalidWritableAccount",
  "WouldExceedMaxAccountCostLimit",
  "WouldExceedAccountDataBlockLimit",
  "TooManyAccountLocks",
  "AddressLookupTableNotFound",
  "InvalidAddressLookupTableOwner",
  "InvalidAddressLookupTableData",
  "InvalidAddressLookupTableIndex",
  "InvalidRentPayingAccount",
  "WouldExceedMaxVoteCostLimit",
  "WouldExceedAccountDataTotalLimit",
  "MaxLoadedAccountsDataSizeExceeded",
  "ResanitizationNeeded",
  "InvalidLoadedAccountsDataSizeLimit",
  "UnbalancedTransaction",
  "ProgramCacheHitMaxLimit",
  "CommitCancelled",
];

const INSTRUCTION_ERRORS = [
  "GenericError",
  "InvalidArgument",
  "InvalidInstructionData",
  "InvalidAccountData",
  "AccountDataTooSmall",
  "InsufficientFunds",
  "IncorrectProgramId",
  "MissingRequiredSignature",
  "AccountAlreadyInitialized",
  "UninitializedAccount",
  "UnbalancedInstruction",
  "ModifiedProgramId",
  "ExternalAccountLamportSpend",
  "ExternalAccountDataModified",
  "ReadonlyLamportChange",
  "ReadonlyDataModified",
  "DuplicateAccountIndex",
  "ExecutableModified",
  "RentEpochModified",
  "NotEnoughAccountKeys",
  "AccountDataSizeChanged",
  "AccountNotExecutable",
  "AccountBorrowFailed",
  "AccountBorrowOutstanding",
  "DuplicateAccountOutOfSync",
  "InvalidError",
  "ExecutableDataModified",
  "ExecutableLamportChange",
  "ExecutableAccountNotRentExempt",
  "UnsupportedProgramId",
  "CallDepth",
  "MissingAccount",
  "ReentrancyNotAllowed",
  "MaxSeedLengthExceeded",
  "InvalidSeeds",
  "InvalidRealloc",
  "ComputationalBudgetExceeded",
  "PrivilegeEscalation",
  "ProgramEnvironmentSetupFailure",
  "ProgramFailedToComplete",
  "ProgramFailedToCompile",
  "Immutable",
  "IncorrectAuthority",
  "AccountNotRentExempt",
  "InvalidAccountOwner",
  "ArithmeticOverflow",
  "UnsupportedSysvar",
  "IllegalOwner",
  "MaxAccountsDataAllocationsExceeded",
  "MaxAccountsExceeded",
  "MaxInstructionTraceLengthExceeded",
  "BuiltinProgramsMustConsumeComputeUnits",
  "BorshIoError",
];

/** The error of a failed litesvm execution, as a validator reports it. */
export function transactionErrorJson(failed: FailedTransactionMetadata): TransactionErrorJson {
  const err = failed.err();
  if (typeof err === "number") return TRANSACTION_ERRORS[err] ?? "InvalidError";
  if (err instanceof TransactionErrorInstructionError) {
    const inner = err.err();
    let detail: unknown;
    if (inner instanceof InstructionErrorCustom) detail = { Custom: inner.code };
    else if (inner instanceof InstructionErrorBorshIo) detail = "BorshIoError";
    else detail = INSTRUCTION_ERRORS[inner] ?? "GenericError";
    return { InstructionError: [err.index, detail] };
  }
  if (err instanceof TransactionErrorDuplicateInstruction) return { DuplicateInstruction: err.index };
  if (err instanceof TransactionErrorInsufficientFundsForRent) return { InsufficientFundsForRent: { account_index: err.accountIndex } };
  if (err instanceof TransactionErrorProgramExecutionTemporarilyRestricted) {
    return { ProgramExecutionTemporarilyRestricted: { account_index: err.accountIndex } };
  }
  return "InvalidError";
}

const TRANSACTION_ERROR_TEXT: Record<string, string> = {
  AccountInUse: "Account in use",
  AccountLoadedTwice: "Account loaded twice",
  AccountNotFound: "Attempt to debit an account but found no record of a prior credit.",
  ProgramAccountNotFound: "Attempt to load a program that does not exist",
  InsufficientFundsForFee: "Insufficient funds for fee",
  InvalidAccountForFee: "This account may not be used to pay transaction fees",
  AlreadyProcessed: "This transaction has already been processed",
  BlockhashNotFound: "Blockhash not found",
  SignatureFailure: "Transaction did not pass signature verification",
  SanitizeFailure: "Transaction failed to sanitize accounts offsets correctly",
};

const INSTRUCTION_ERROR_TEXT: Record<string, string> = {
  InvalidArgument: "invalid program argument",
  InvalidInstructionData: "invalid instruction data",
  InvalidAccountData: "invalid account data for instruction",
  InsufficientFunds: "insufficient funds for instruction",
  IncorrectProgramId: "incorrect program id for instruction",
  MissingRequiredSignature: "missing required signature for instruction",
  UninitializedAccount: "instruction requires an initialized account",
  IllegalOwner: "Provided owner is not allowed",
};

/** The message a validator gives such an error (agave's Display of TransactionError). */
export function transactionErrorText(err: TransactionErrorJson): string {
  if (typeof err === "string") return TRANSACTION_ERROR_TEXT[err] ?? err;
  const [variant, detail] = Object.entries(err)[0] ?? ["InvalidError", null];
  if (variant === "InstructionError" && Array.isArray(detail)) {
    const [index, cause] = detail as [number, unknown];
    const causeText =
      typeof cause === "string"
        ? (INSTRUCTION_ERROR_TEXT[cause] ?? cause)
        : `custom program error: 0x${((cause as { Custom: number }).Custom ?? 0).toString(16)}`;
    return `Error processing Instruction ${index}: ${causeText}`;
  }
  if (variant === "InsufficientFundsForRent") {
    return `Transaction results in an account (${(detail as { account_index: number }).account_index}) with insufficient funds for rent`;
  }
  return variant;
}
