import {
  address,
  getBase58Decoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type Address,
  type CompiledTransactionMessageWithLifetime,
  type LegacyCompiledTransactionMessage,
  type ReadonlyUint8Array,
  type V0CompiledTransactionMessage,
  type Transaction,
} from "@solana/kit";
import { LAMPORTS_PER_SIGNATURE } from "./network";
import { INVALID_PARAMS, RpcError } from "./rpc-errors";

/** A compiled message of a version this devnet serves (legacy or v0). */
export type CompiledMessage = (LegacyCompiledTransactionMessage | V0CompiledTransactionMessage) & CompiledTransactionMessageWithLifetime;

/** A wire transaction with what the devnet reads from it. */
export interface DecodedTransaction {
  wire: Uint8Array;
  transaction: Transaction;
  message: CompiledMessage;
  /** The first signature, which names the transaction (all ones when the fee payer has not signed yet, as validators show it). */
  signature: string;
  recentBlockhash: string;
}

const COMPUTE_BUDGET_PROGRAM: Address = address("ComputeBudget111111111111111111111111111111");
const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;
const MAX_COMPUTE_UNITS = 1_400_000n;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;
const NO_SIGNATURE = new Uint8Array(64);

export function decodeTransaction(wire: Uint8Array): DecodedTransaction {
  let transaction: Transaction;
  let decodedMessage: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>["decode"]>;
  try {
    transaction = getTransactionDecoder().decode(wire);
    decodedMessage = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  } catch (err) {
    throw new RpcError(INVALID_PARAMS, `failed to deserialize solana_transaction::versioned::VersionedTransaction: ${(err as Error).message}`);
  }
  if (decodedMessage.version !== "legacy" && decodedMessage.version !== 0) {
    throw new RpcError(INVALID_PARAMS, `unsupported transaction version ${String(decodedMessage.version)}`);
  }
  const message: CompiledMessage = decodedMessage;
  if (Object.keys(transaction.signatures).length !== message.header.numSignerAccounts || message.staticAccounts.length === 0) {
    throw new RpcError(INVALID_PARAMS, "invalid transaction: Transaction failed to sanitize accounts offsets correctly");
  }
  const feePayerSignature = transaction.signatures[message.staticAccounts[0]!] ?? NO_SIGNATURE;
  return { wire, transaction, message, signature: getBase58Decoder().decode(feePayerSignature), recentBlockhash: message.lifetimeToken };
}

/** The same transaction with another recent blockhash (simulateTransaction's replaceRecentBlockhash; its signatures no longer match). */
export function withRecentBlockhash(decoded: DecodedTransaction, blockhash: string): DecodedTransaction {
  const messageBytes = getCompiledTransactionMessageEncoder().encode({ ...decoded.message, lifetimeToken: blockhash });
  const transaction = { ...decoded.transaction, messageBytes: messageBytes as Transaction["messageBytes"] };
  return decodeTransaction(new Uint8Array(getTransactionEncoder().encode(transaction)));
}

function readUnsigned(data: ReadonlyUint8Array, offset: number, bytes: 4 | 8): bigint | null {
  if (data.length < offset + bytes) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return bytes === 4 ? BigInt(view.getUint32(offset, true)) : view.getBigUint64(offset, true);
}

/**
 * The fee a validator charges for this message: 5000 lamports a signature plus
 * the priority fee (compute unit price × limit). Without an explicit limit the
 * default is 200k units per instruction (agave charges builtins less; the x402
 * transactions this devnet serves always set their limit).
 */
export function transactionFee(message: CompiledMessage): bigint {
  let unitLimit: bigint | null = null;
  let microLamportsPerUnit = 0n;
  let otherInstructions = 0n;
  for (const instruction of message.instructions) {
    const data = instruction.data ?? new Uint8Array();
    if (message.staticAccounts[instruction.programAddressIndex] !== COMPUTE_BUDGET_PROGRAM) {
      otherInstructions += 1n;
    } else if (data[0] === SET_COMPUTE_UNIT_LIMIT) {
      unitLimit = readUnsigned(data, 1, 4) ?? unitLimit;
    } else if (data[0] === SET_COMPUTE_UNIT_PRICE) {
      microLamportsPerUnit = readUnsigned(data, 1, 8) ?? microLamportsPerUnit;
    }
  }
  const units = unitLimit ?? otherInstructions * DEFAULT_UNITS_PER_INSTRUCTION;
  const cappedUnits = units > MAX_COMPUTE_UNITS ? MAX_COMPUTE_UNITS : units;
  const priorityFee = (microLamportsPerUnit * cappedUnits + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
  return LAMPORTS_PER_SIGNATURE * BigInt(message.header.numSignerAccounts) + priorityFee;
}

/** Whether the account at this index of the message's static keys is writable (the header's layout). */
export function isWritableIndex(message: CompiledMessage, index: number): boolean {
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  if (index < numSignerAccounts) return index < numSignerAccounts - numReadonlySignerAccounts;
  return index < message.staticAccounts.length - numReadonlyNonSignerAccounts;
}
