import { Address, hash, xdr } from "@stellar/stellar-base";
import { i128 } from "./ledger-entries";
import type { Invalid } from "./transactions";

/** TransactionResult and TransactionMeta (v4) as stellar-core writes them for the stand-in's outcomes. */

const int64 = (value: bigint) => xdr.Int64.fromString(value.toString());

/** The result core answers `ERROR` with (sendTransaction's `errorResultXdr`). */
export function invalidResult(invalid: Invalid, feeCharged: bigint, innerHash: Buffer): xdr.TransactionResult {
  const result =
    invalid.code === "txFeeBumpInnerFailed"
      ? xdr.TransactionResultResult.txFeeBumpInnerFailed(
          new xdr.InnerTransactionResultPair({
            transactionHash: innerHash,
            result: new xdr.InnerTransactionResult({
              feeCharged: int64(0n),
              result: xdr.InnerTransactionResultResult[invalid.innerCode!](),
              ext: new xdr.InnerTransactionResultExt(0),
            }),
          }),
        )
      : xdr.TransactionResultResult[invalid.code]();
  return new xdr.TransactionResult({ feeCharged: int64(feeCharged), result, ext: new xdr.TransactionResultExt(0) });
}

/** The result of a transaction that applied: its one InvokeHostFunction succeeded (with the hash of its return value and events) or trapped. */
export function appliedResult(options: { events: xdr.ContractEvent[] | null; feeCharged: bigint; feeBumpInnerHash: Buffer | null }): xdr.TransactionResult {
  const { events, feeCharged, feeBumpInnerHash } = options;
  const invokeResult =
    events === null
      ? xdr.InvokeHostFunctionResult.invokeHostFunctionTrapped()
      : xdr.InvokeHostFunctionResult.invokeHostFunctionSuccess(
          hash(new xdr.InvokeHostFunctionSuccessPreImage({ returnValue: xdr.ScVal.scvVoid(), events }).toXDR()),
        );
  const operationResults = [xdr.OperationResult.opInner(xdr.OperationResultTr.invokeHostFunction(invokeResult))];
  const success = events !== null;
  const result = feeBumpInnerHash
    ? xdr.TransactionResultResult[success ? "txFeeBumpInnerSuccess" : "txFeeBumpInnerFailed"](
        new xdr.InnerTransactionResultPair({
          transactionHash: feeBumpInnerHash,
          result: new xdr.InnerTransactionResult({
            feeCharged: int64(0n),
            result: xdr.InnerTransactionResultResult[success ? "txSuccess" : "txFailed"](operationResults),
            ext: new xdr.InnerTransactionResultExt(0),
          }),
        }),
      )
    : xdr.TransactionResultResult[success ? "txSuccess" : "txFailed"](operationResults);
  return new xdr.TransactionResult({ feeCharged: int64(feeCharged), result, ext: new xdr.TransactionResultExt(0) });
}

/** The native asset contract's `fee` event (CAP-67): what the fee source paid, before any transaction applies. */
export function feeEvent(nativeContract: string, feeSource: string, fee: bigint): xdr.TransactionEvent {
  return new xdr.TransactionEvent({
    stage: xdr.TransactionEventStage.transactionEventStageBeforeAllTxes(),
    event: new xdr.ContractEvent({
      ext: new xdr.ExtensionPoint(0),
      contractId: Address.fromString(nativeContract).toBuffer() as unknown as xdr.ContractId,
      type: xdr.ContractEventType.contract(),
      body: new xdr.ContractEventBody(0, new xdr.ContractEventV0({ topics: [xdr.ScVal.scvSymbol("fee"), new Address(feeSource).toScVal()], data: i128(fee) })),
    }),
  });
}

/** A diagnostic event saying why a call failed, as `getTransaction` and simulation carry them. */
export function errorDiagnostic(message: string): xdr.DiagnosticEvent {
  return new xdr.DiagnosticEvent({
    inSuccessfulContractCall: false,
    event: new xdr.ContractEvent({
      ext: new xdr.ExtensionPoint(0),
      contractId: null,
      type: xdr.ContractEventType.diagnostic(),
      body: new xdr.ContractEventBody(0, new xdr.ContractEventV0({ topics: [xdr.ScVal.scvSymbol("error")], data: xdr.ScVal.scvString(message) })),
    }),
  });
}

export interface MetaParts {
  /** Whether the operation succeeded: a trapped one leaves no operation meta. */
  succeeded: boolean;
  /** Fee and sequence number changes of the source and fee source accounts. */
  txChangesBefore: xdr.LedgerEntryChange[];
  /** The operation's entry changes and events. */
  operationChanges: xdr.LedgerEntryChange[];
  operationEvents: xdr.ContractEvent[];
  transactionEvents: xdr.TransactionEvent[];
  diagnosticEvents: xdr.DiagnosticEvent[];
}

export function transactionMeta(parts: MetaParts): xdr.TransactionMeta {
  return new xdr.TransactionMeta(
    4,
    new xdr.TransactionMetaV4({
      ext: new xdr.ExtensionPoint(0),
      txChangesBefore: parts.txChangesBefore,
      operations: parts.succeeded
        ? [new xdr.OperationMetaV2({ ext: new xdr.ExtensionPoint(0), changes: parts.operationChanges, events: parts.operationEvents })]
        : [],
      txChangesAfter: [],
      sorobanMeta: new xdr.SorobanTransactionMetaV2({ ext: new xdr.SorobanTransactionMetaExt(0), returnValue: parts.succeeded ? xdr.ScVal.scvVoid() : null }),
      events: parts.transactionEvents,
      diagnosticEvents: parts.diagnosticEvents,
    }),
  );
}
