import { getPublicKeyFromAddress, verifySignature, type Address, type SignatureBytes } from "@solana/kit";
import { associatedTokenAddress } from "./associated-token-address";
import type { ExactSvmPayment, SvmInstruction } from "./decode";
import type { SvmTransfer } from "./prepared-transfers";
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  LIGHTHOUSE_PROGRAM_ADDRESS,
  MEMO_PROGRAM_ADDRESS,
  SET_COMPUTE_UNIT_LIMIT,
  SET_COMPUTE_UNIT_PRICE,
  TOKEN_PROGRAMS,
  TRANSFER_CHECKED,
} from "./programs";
import { SvmPaymentRejected, SvmRejection, type SvmRejectionReason } from "./rejections";

/** What the service requires of an exact SVM payment (from the requirement it issued). */
export interface ExactSvmRequirement {
  payTo: string;
  asset: string;
  amount: bigint;
  feePayer: string;
  memo?: string;
  /**
   * A payment to several recipients (a transaction the service prepared):
   * exactly these transfers, in this order, from one payer, in place of the
   * one transfer of `amount` to `payTo`.
   */
  transfers?: readonly SvmTransfer[];
}

/** The limits this service holds a payment to: whose fee payer, which mint, how much compute it may buy. */
export interface ExactSvmPolicy {
  feePayer: string;
  usdcMint: string;
  maxComputeUnits: number;
  /** Microlamports per compute unit. */
  maxComputeUnitPrice: bigint;
}

/** The official facilitator's cap on the priority fee: 5 lamports a compute unit. */
export const DEFAULT_MAX_COMPUTE_UNIT_PRICE = 5_000_000n;
/** The official client asks for 20,000; a TransferChecked uses about 6,200 (Token-2022 with extensions more). */
export const DEFAULT_MAX_COMPUTE_UNITS = 200_000;
/** After the compute limit, the compute price and the transfer, the official facilitator allows four more (Memo or Lighthouse). */
const MOST_OPTIONAL_INSTRUCTIONS = 4;
const OPTIONAL_INSTRUCTION_REASONS: readonly SvmRejectionReason[] = [
  SvmRejection.unknownFourthInstruction,
  SvmRejection.unknownFifthInstruction,
  SvmRejection.unknownSixthInstruction,
  SvmRejection.unknownSeventhInstruction,
];
const OPTIONAL_PROGRAMS: ReadonlySet<string> = new Set([MEMO_PROGRAM_ADDRESS, LIGHTHOUSE_PROGRAM_ADDRESS]);

function reject(reason: SvmRejectionReason, message: string): never {
  throw new SvmPaymentRejected(reason, message);
}

/**
 * The static checks of an exact SVM payment against the requirement it
 * answers, throwing SvmPaymentRejected: the official 2.27 facilitator's rules
 * (its positional layout, caps and reason codes) and stricter ones of ours —
 * the fee payer is ours and is named by no instruction, the transfer is the
 * only one and moves this service's USDC, exactly the fee payer and the
 * transfer's authority sign, no lookup tables (refused by the decoder).
 * Signatures are only seen to be present here; `verifySignerSignatures` checks them.
 */
export function checkExactSvmPayment(payment: ExactSvmPayment, requirement: ExactSvmRequirement, policy: ExactSvmPolicy): void {
  if (requirement.feePayer !== policy.feePayer) {
    reject(SvmRejection.feePayerNotManaged, `The requirement's fee payer ${requirement.feePayer} is not this service's (${policy.feePayer}).`);
  }
  if (payment.feePayer !== requirement.feePayer) {
    reject(SvmRejection.feePayerMismatch, `The transaction's fee payer is ${payment.feePayer}, not ${requirement.feePayer}.`);
  }

  const { instructions } = payment;
  const transfers = requirement.transfers ?? [{ payTo: requirement.payTo, amount: requirement.amount }];
  const fewest = 2 + transfers.length;
  if (instructions.length < fewest || instructions.length > fewest + MOST_OPTIONAL_INSTRUCTIONS) {
    reject(
      SvmRejection.instructionsLength,
      `The transaction has ${instructions.length} instructions; this payment has ${fewest} to ${fewest + MOST_OPTIONAL_INSTRUCTIONS}.`,
    );
  }
  checkComputeUnitLimit(instructions[0]!, policy.maxComputeUnits);
  checkComputeUnitPrice(instructions[1]!, policy.maxComputeUnitPrice);
  transfers.forEach((transfer, i) => checkTransfer(payment, instructions[2 + i]!, transfer, requirement.asset, policy));
  instructions.slice(fewest).forEach((ix, i) => {
    if (!OPTIONAL_PROGRAMS.has(ix.programAddress)) {
      reject(
        OPTIONAL_INSTRUCTION_REASONS[i]!,
        `Instruction ${fewest + i + 1} runs ${ix.programAddress}; after the transfers only Memo and Lighthouse are allowed.`,
      );
    }
  });
  checkMemo(instructions, requirement.memo);
  assertFeePayerIsolated(payment, policy.feePayer);
  checkSigners(payment);
}

function checkComputeUnitLimit(ix: SvmInstruction, maxUnits: number): void {
  // SetComputeUnitLimit: [2, units u32 LE], no accounts.
  if (ix.programAddress !== COMPUTE_BUDGET_PROGRAM_ADDRESS || ix.data[0] !== SET_COMPUTE_UNIT_LIMIT || ix.data.length !== 5 || ix.accounts.length > 0) {
    reject(SvmRejection.computeLimitInstruction, "The first instruction must set the compute unit limit.");
  }
  const units = new DataView(ix.data.buffer, ix.data.byteOffset, ix.data.byteLength).getUint32(1, true);
  if (units > maxUnits) reject(SvmRejection.computeLimitTooHigh, `The transaction asks for ${units} compute units; at most ${maxUnits} are paid for.`);
}

function checkComputeUnitPrice(ix: SvmInstruction, maxPrice: bigint): void {
  // SetComputeUnitPrice: [3, microlamports u64 LE], no accounts.
  if (ix.programAddress !== COMPUTE_BUDGET_PROGRAM_ADDRESS || ix.data[0] !== SET_COMPUTE_UNIT_PRICE || ix.data.length !== 9 || ix.accounts.length > 0) {
    reject(SvmRejection.computePriceInstruction, "The second instruction must set the compute unit price.");
  }
  const price = new DataView(ix.data.buffer, ix.data.byteOffset, ix.data.byteLength).getBigUint64(1, true);
  if (price > maxPrice) reject(SvmRejection.computePriceTooHigh, `The compute unit price ${price} microlamports is above ${maxPrice}.`);
}

/**
 * One expected transfer, read from its instruction. The decoder's summary
 * (payer, source, token program) is of the first TransferChecked: after two
 * compute budget instructions, the first expected one. Every transfer moves
 * from that source under that authority and program; another TransferChecked
 * after the expected ones would sit where only Memo and Lighthouse are
 * allowed. Exactly four accounts: a multisig authority (its signers listed
 * after the fourth) is not an exact payment.
 */
function checkTransfer(payment: ExactSvmPayment, ix: SvmInstruction, expected: SvmTransfer, asset: string, policy: ExactSvmPolicy): void {
  if (
    !TOKEN_PROGRAMS.has(ix.programAddress) ||
    ix.programAddress !== payment.tokenProgram ||
    ix.data[0] !== TRANSFER_CHECKED ||
    ix.data.length !== 10 ||
    ix.accounts.length !== 4
  ) {
    reject(SvmRejection.noTransferInstruction, "The transfers must follow the compute budget instructions, one TransferChecked per recipient.");
  }
  const [source, mint, destination, authority] = ix.accounts as [string, string, string, string];
  if (authority === policy.feePayer) {
    reject(SvmRejection.feePayerTransferringFunds, "The transfer's authority is the fee payer: the facilitator's own funds would move.");
  }
  if (authority !== payment.payer || source !== payment.source) {
    reject(SvmRejection.transfersFromSeveralPayers, "Every transfer of a payment moves from the one payer's account, under its signature.");
  }
  if (mint !== asset || asset !== policy.usdcMint) reject(SvmRejection.mintMismatch, `The transfer moves ${mint}, not ${asset}.`);
  let expectedDestination: string | undefined;
  try {
    expectedDestination = associatedTokenAddress(expected.payTo, asset, payment.tokenProgram);
  } catch {}
  if (destination !== expectedDestination) {
    reject(SvmRejection.recipientMismatch, `The transfer pays ${destination}, not the associated token account of ${expected.payTo}.`);
  }
  const amount = new DataView(ix.data.buffer, ix.data.byteOffset, ix.data.byteLength).getBigUint64(1, true);
  if (amount !== expected.amount) reject(SvmRejection.amountMismatch, `The transfer moves ${amount} base units, not ${expected.amount}.`);
}

function checkMemo(instructions: readonly SvmInstruction[], expected: string | undefined): void {
  if (!expected) return;
  const memos = instructions.filter((ix) => ix.programAddress === MEMO_PROGRAM_ADDRESS);
  if (memos.length !== 1) reject(SvmRejection.memoCount, `The transaction has ${memos.length} memos; the requirement asks for exactly one.`);
  // Bytes, not decoded text: invalid UTF-8 would decode to replacement characters.
  if (!Buffer.from(memos[0]!.data).equals(Buffer.from(expected, "utf8"))) {
    reject(SvmRejection.memoMismatch, "The transaction's memo is not the one the requirement asks for.");
  }
}

/**
 * The fee payer appears in no instruction, as an account or as the program.
 * This is what keeps its lamports to the transaction fee: every way to spend
 * them (a System transfer from it, it as a token authority or source, an
 * account closed to or by it, an account created with it paying the rent)
 * needs it named by an instruction. Checked again before co-signing.
 */
export function assertFeePayerIsolated(payment: ExactSvmPayment, feePayer: string): void {
  payment.instructions.forEach((ix, i) => {
    if (ix.programAddress === feePayer || ix.accounts.includes(feePayer)) {
      reject(SvmRejection.feePayerNotIsolated, `Instruction ${i + 1} (${ix.programAddress}) names the fee payer; it may only pay the transaction fee.`);
    }
  });
}

/** Exactly two signers, the fee payer then the transfer's authority, and the authority's signature is there. */
function checkSigners(payment: ExactSvmPayment): void {
  if (payment.signers.length > 2) {
    reject(SvmRejection.excessiveSigners, `The transaction has ${payment.signers.length} signers; an exact payment has two (the fee payer and the payer).`);
  }
  if (payment.signers[1] !== payment.payer) reject(SvmRejection.signatureInvalid, "The transfer's authority does not sign the transaction.");
  if (!payment.signatures[1]) reject(SvmRejection.signatureInvalid, "The payer has not signed the transaction.");
}

/**
 * Everything that can be judged of a payment without a chain: the static
 * checks, then every signature but the fee payer's verified over the message.
 * Live payments are then simulated (`SvmChain.verify`); a rehearsal, which
 * never reaches a chain, is judged by this alone.
 */
export async function verifyExactSvmPaymentOffline(payment: ExactSvmPayment, requirement: ExactSvmRequirement, policy: ExactSvmPolicy): Promise<void> {
  checkExactSvmPayment(payment, requirement, policy);
  await verifySignerSignatures(payment);
}

/** Every signature but the fee payer's (ours, added when co-signing) verifies over the message. */
export async function verifySignerSignatures(payment: ExactSvmPayment): Promise<void> {
  const results = await Promise.all(
    payment.signers.slice(1).map(async (signer, i) => {
      const signed = payment.signatures[i + 1];
      if (!signed) return false;
      try {
        const key = await getPublicKeyFromAddress(signer as Address);
        return await verifySignature(key, signed as SignatureBytes, payment.messageBytes);
      } catch {
        return false;
      }
    }),
  );
  if (results.some((valid) => !valid)) reject(SvmRejection.signatureInvalid, "A signature on the transaction does not verify.");
}
