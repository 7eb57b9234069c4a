import { createHash } from "node:crypto";
import {
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getShortU16Decoder,
  getTransactionDecoder,
  type CompiledTransactionMessage,
  type CompiledTransactionMessageWithLifetime,
  type Transaction,
} from "@solana/kit";
import { MEMO_PROGRAM_ADDRESS, TOKEN_PROGRAMS, TRANSFER_CHECKED } from "./programs";
import { SvmPaymentRejected, SvmRejection } from "./rejections";

/** The most a transaction may weigh on the wire (an IPv6 packet less its headers): the cluster drops anything larger. */
export const MAX_TRANSACTION_BYTES = 1232;
const MAX_BASE64_LENGTH = Math.ceil(MAX_TRANSACTION_BYTES / 3) * 4;
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** One instruction with its accounts resolved to addresses (lookup tables are refused, so all are static). */
export interface SvmInstruction {
  programAddress: string;
  accounts: readonly string[];
  data: Uint8Array;
}

/** A decoded exact SVM payload (payload.transaction: a base64 wire transaction, partially signed by the payer). */
export interface ExactSvmPayment {
  /** The base64 as presented. */
  transaction: string;
  /** Hex sha256 of the compiled message bytes: the dedup key (an attacker can vary the fee-payer signature slot, so never key on the base64). */
  messageHash: string;
  /** The TransferChecked authority (base58). */
  payer: string;
  source: string;
  destination: string;
  mint: string;
  amount: bigint;
  decimals: number;
  /** The token program the TransferChecked runs under (SPL Token or Token-2022). */
  tokenProgram: string;
  blockhash: string;
  /** The text of every Memo instruction, in order. */
  memos: string[];
  /** Account 0, who pays the transaction fee. */
  feePayer: string;
  version: "legacy" | 0;
  /** The accounts that must sign, in order (the first is the fee payer). */
  signers: readonly string[];
  /** Each signer's signature as presented, null where the slot is empty (all zeros). */
  signatures: readonly (Uint8Array | null)[];
  instructions: readonly SvmInstruction[];
  /** The compiled message: what every signature signs. */
  messageBytes: Uint8Array;
}

const base64Encoder = getBase64Encoder();
const base64Decoder = getBase64Decoder();
const transactionDecoder = getTransactionDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();
const messageEncoder = getCompiledTransactionMessageEncoder();
const shortU16Decoder = getShortU16Decoder();

function undecodable(why: string): SvmPaymentRejected {
  return new SvmPaymentRejected(SvmRejection.couldNotBeDecoded, `The payment's transaction could not be decoded: ${why}.`);
}

/**
 * Decodes an exact SVM payload's transaction and finds its transfer, refusing
 * anything malformed or larger than a packet. It judges nothing about whom
 * the transfer pays or who pays the fee: that is `checkExactSvmPayment`.
 */
export function decodeExactSvmPayment(transactionBase64: string): ExactSvmPayment {
  if (typeof transactionBase64 !== "string" || transactionBase64.length === 0) throw undecodable("it is empty");
  if (transactionBase64.length > MAX_BASE64_LENGTH) throw undecodable(`it is larger than ${MAX_TRANSACTION_BYTES} bytes`);
  if (!CANONICAL_BASE64.test(transactionBase64)) throw undecodable("it is not base64");
  const bytes = base64Encoder.encode(transactionBase64) as Uint8Array;
  // The regex allows non-zero padding bits; a strict round trip makes the base64 of one transaction unique.
  if (base64Decoder.decode(bytes) !== transactionBase64) throw undecodable("it is not canonical base64");
  if (bytes.length > MAX_TRANSACTION_BYTES) throw undecodable(`it is larger than ${MAX_TRANSACTION_BYTES} bytes`);

  let transaction: Transaction;
  let message: CompiledTransactionMessage & CompiledTransactionMessageWithLifetime;
  let signatureCount: number;
  try {
    transaction = transactionDecoder.decode(bytes);
    signatureCount = shortU16Decoder.read(bytes, 0)[0];
    message = messageDecoder.decode(transaction.messageBytes);
    // Only bytes the cluster would read the same way: kit's decoder tolerates bytes after the message and a
    // v0 message cut short of its lookup-table section, so the message must encode back to exactly itself.
    if (!Buffer.from(messageEncoder.encode(message)).equals(Buffer.from(transaction.messageBytes))) throw undecodable("its message is not canonical");
  } catch (err) {
    if (err instanceof SvmPaymentRejected) throw err;
    throw undecodable("its bytes are not a Solana transaction");
  }
  if (message.version !== "legacy" && message.version !== 0) throw undecodable(`version ${String(message.version)} messages are not accepted`);
  if (message.version === 0 && (message.addressTableLookups?.length ?? 0) > 0) {
    throw new SvmPaymentRejected(
      SvmRejection.addressLookupTables,
      "The payment's transaction loads accounts from address lookup tables, which are not accepted.",
    );
  }

  const accounts = message.staticAccounts.map(String);
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  // The runtime's own sanitization, so nothing below reads past an array.
  if (new Set(accounts).size !== accounts.length) throw undecodable("an account is listed twice");
  if (numSignerAccounts < 1 || numSignerAccounts > accounts.length || signatureCount !== numSignerAccounts)
    throw undecodable("its signatures do not match its signers");
  if (numReadonlySignerAccounts >= numSignerAccounts || numSignerAccounts + numReadonlyNonSignerAccounts > accounts.length)
    throw undecodable("its header is inconsistent");

  const instructions: SvmInstruction[] = message.instructions.map((ix) => {
    const indices = ix.accountIndices ?? [];
    // Index 0 is the fee payer, which can never be a program.
    if (ix.programAddressIndex === 0 || ix.programAddressIndex >= accounts.length || indices.some((i) => i >= accounts.length)) {
      throw undecodable("an instruction refers to an account that is not there");
    }
    return { programAddress: accounts[ix.programAddressIndex]!, accounts: indices.map((i) => accounts[i]!), data: Uint8Array.from(ix.data ?? []) };
  });

  const transfer = instructions.find((ix) => TOKEN_PROGRAMS.has(ix.programAddress) && ix.data[0] === TRANSFER_CHECKED);
  // TransferChecked: [12, amount u64 LE, decimals u8]; accounts: source, mint, destination, authority.
  if (!transfer || transfer.data.length !== 10 || transfer.accounts.length < 4) {
    throw new SvmPaymentRejected(SvmRejection.noTransferInstruction, "The payment's transaction has no token transfer (TransferChecked).");
  }
  const transferData = new DataView(transfer.data.buffer, transfer.data.byteOffset, transfer.data.byteLength);
  const signers = accounts.slice(0, numSignerAccounts);
  const textDecoder = new TextDecoder();

  return {
    transaction: transactionBase64,
    messageHash: createHash("sha256").update(Uint8Array.from(transaction.messageBytes)).digest("hex"),
    payer: transfer.accounts[3]!,
    source: transfer.accounts[0]!,
    mint: transfer.accounts[1]!,
    destination: transfer.accounts[2]!,
    amount: transferData.getBigUint64(1, true),
    decimals: transferData.getUint8(9),
    tokenProgram: transfer.programAddress,
    blockhash: String(message.lifetimeToken),
    memos: instructions.filter((ix) => ix.programAddress === MEMO_PROGRAM_ADDRESS).map((ix) => textDecoder.decode(ix.data)),
    feePayer: accounts[0]!,
    version: message.version,
    signers,
    signatures: signers.map((signer) => {
      const bytes = transaction.signatures[signer as keyof typeof transaction.signatures];
      return bytes ? Uint8Array.from(bytes) : null;
    }),
    instructions,
    messageBytes: Uint8Array.from(transaction.messageBytes),
  };
}
