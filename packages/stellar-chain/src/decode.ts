import { MAX_STELLAR_TRANSACTION_BYTES } from "@c402/x402";
import { Address, encodeMuxedAccountToAddress, extractBaseAddress, scValToBigInt, xdr } from "@stellar/stellar-sdk";
import { StellarPaymentRejected, StellarRejection, type StellarRejectionReason } from "./rejections";

/** One Soroban authorization entry of the payment's operation, read. */
export interface StellarAuthEntry {
  /** `address`: signed by `address` for itself; `sourceAccount`: authorized by whoever is the transaction's source. */
  credentials: "address" | "sourceAccount";
  /** For address credentials: who authorizes (G… or C…), the entry's nonce and the last ledger its signature is good for. */
  address?: string;
  nonce?: bigint;
  signatureExpirationLedger?: number;
  /** Whether a signature is there (not void); whether it verifies is `verifyPayerSignature`'s question. */
  signed: boolean;
  subInvocations: number;
  entry: xdr.SorobanAuthorizationEntry;
}

/** An exact Stellar payment, decoded: the transfer it asks for and everything the checks read. */
export interface ExactStellarPayment {
  /** The payload's base64 XDR, as presented. */
  transaction: string;
  networkPassphrase: string;
  /** The transaction's source as written (G…, or M… when muxed) and its account (G…). */
  source: string;
  sourceAccount: string;
  /** The operation's own source, when it names one. */
  operationSource?: string;
  /** The transaction's declared total fee and its Soroban resource fee, in stroops. */
  fee: bigint;
  resourceFee: bigint;
  /** The invoked contract and function. */
  contract: string;
  functionName: string;
  /** transfer(from, to, amount): the payer, the recipient and the amount in token units. */
  payer: string;
  payTo: string;
  amount: bigint;
  authEntries: StellarAuthEntry[];
  /** The operation's host function (the contract call), as settlement copies it. */
  hostFunction: xdr.HostFunction;
}

const STANDARD_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function reject(reason: StellarRejectionReason, message: string): never {
  throw new StellarPaymentRejected(reason, message);
}

const malformed = (why: string): never => reject(StellarRejection.malformed, `The payment's transaction could not be read: ${why}.`);

/** An account or contract address (the two an x402 transfer names), as its strkey; undefined for any other ScVal. */
export function addressOf(value: xdr.ScVal): string | undefined {
  if (value.switch() !== xdr.ScValType.scvAddress()) return undefined;
  const address = value.address();
  const kind = address.switch();
  if (kind !== xdr.ScAddressType.scAddressTypeAccount() && kind !== xdr.ScAddressType.scAddressTypeContract()) return undefined;
  return Address.fromScAddress(address).toString();
}

/**
 * Decodes an exact Stellar payload's transaction: canonical base64 of at most
 * MAX_STELLAR_TRANSACTION_BYTES, an XDR TransactionEnvelope of type
 * ENVELOPE_TYPE_TX (not a fee bump, not v0) that encodes back to exactly its
 * bytes, with Soroban data; one InvokeHostFunction operation calling a
 * contract's `transfer(from: Address, to: Address, amount: i128)`, from and to
 * accounts (G…) or contracts (C…). The network passphrase is not in the bytes:
 * it is what signatures are checked against (`verifyPayerSignature`).
 * Refusals carry the official facilitator's codes.
 */
export function decodeExactStellarPayment(transactionBase64: string, networkPassphrase: string): ExactStellarPayment {
  const maxChars = Math.ceil(MAX_STELLAR_TRANSACTION_BYTES / 3) * 4;
  if (typeof transactionBase64 !== "string" || transactionBase64.length === 0 || transactionBase64.length > maxChars) {
    malformed(`it must be base64 of at most ${MAX_STELLAR_TRANSACTION_BYTES} bytes`);
  }
  if (transactionBase64.length % 4 !== 0 || !STANDARD_BASE64.test(transactionBase64)) malformed("it is not standard padded base64");
  const bytes = Buffer.from(transactionBase64, "base64");
  if (bytes.toString("base64") !== transactionBase64) malformed("it is not canonical base64");

  let envelope: xdr.TransactionEnvelope;
  try {
    envelope = xdr.TransactionEnvelope.fromXDR(bytes);
  } catch {
    return malformed("its bytes are not a Stellar transaction envelope");
  }
  // XDR has one encoding per value: anything appended or altered shows here.
  if (!envelope.toXDR().equals(bytes)) malformed("its XDR is not canonical");
  if (envelope.switch() !== xdr.EnvelopeType.envelopeTypeTx()) malformed("it must be a transaction envelope (not a fee bump or a v0 envelope)");
  const tx = envelope.v1().tx();
  if (tx.ext().switch() !== 1) malformed("it has no Soroban data");
  const sorobanData = tx.ext().sorobanData();

  const operations = tx.operations();
  if (operations.length !== 1) {
    reject(StellarRejection.wrongOperation, `The transaction has ${operations.length} operations; an exact payment has one.`);
  }
  const operation = operations[0]!;
  if (operation.body().switch() !== xdr.OperationType.invokeHostFunction()) {
    reject(StellarRejection.wrongOperation, `The operation is ${operation.body().switch().name}, not invokeHostFunction.`);
  }
  const invoke = operation.body().invokeHostFunctionOp();
  const hostFunction = invoke.hostFunction();
  if (hostFunction.switch() !== xdr.HostFunctionType.hostFunctionTypeInvokeContract()) {
    reject(StellarRejection.wrongOperation, `The operation's host function is ${hostFunction.switch().name}, not a contract call.`);
  }
  const call = hostFunction.invokeContract();
  const functionName = call.functionName().toString();
  const args = call.args();
  if (functionName !== "transfer" || args.length !== 3) {
    reject(StellarRejection.wrongFunctionName, `The transaction calls ${functionName} with ${args.length} arguments, not transfer(from, to, amount).`);
  }
  const [fromArg, toArg, amountArg] = args as [xdr.ScVal, xdr.ScVal, xdr.ScVal];
  const payer = addressOf(fromArg);
  if (!payer) reject(StellarRejection.wrongFunctionName, "The transfer's from is not an account or contract address.");
  const payTo = addressOf(toArg);
  if (!payTo) reject(StellarRejection.wrongRecipient, "The transfer's to is not an account or contract address.");
  if (amountArg.switch() !== xdr.ScValType.scvI128()) reject(StellarRejection.wrongAmount, "The transfer's amount is not an i128.");

  const contractAddress = call.contractAddress();
  if (contractAddress.switch() !== xdr.ScAddressType.scAddressTypeContract()) malformed("the invoked address is not a contract");
  const sourceMuxed = tx.sourceAccount();
  const operationSource = operation.sourceAccount();
  return {
    transaction: transactionBase64,
    networkPassphrase,
    source: encodeMuxedAccountToAddress(sourceMuxed, true),
    sourceAccount: extractBaseAddress(encodeMuxedAccountToAddress(sourceMuxed, true)),
    ...(operationSource ? { operationSource: encodeMuxedAccountToAddress(operationSource, true) } : {}),
    fee: BigInt(tx.fee()),
    resourceFee: sorobanData.resourceFee().toBigInt(),
    contract: Address.fromScAddress(contractAddress).toString(),
    functionName,
    payer: payer!,
    payTo: payTo!,
    amount: scValToBigInt(amountArg),
    authEntries: invoke.auth().map(readAuthEntry),
    hostFunction,
  };
}

function readAuthEntry(entry: xdr.SorobanAuthorizationEntry): StellarAuthEntry {
  const credentials = entry.credentials();
  const subInvocations = entry.rootInvocation().subInvocations().length;
  if (credentials.switch() !== xdr.SorobanCredentialsType.sorobanCredentialsAddress()) {
    return { credentials: "sourceAccount", signed: false, subInvocations, entry };
  }
  const address = credentials.address();
  return {
    credentials: "address",
    address: Address.fromScAddress(address.address()).toString(),
    nonce: address.nonce().toBigInt(),
    signatureExpirationLedger: address.signatureExpirationLedger(),
    signed: address.signature().switch() !== xdr.ScValType.scvVoid(),
    subInvocations,
    entry,
  };
}
