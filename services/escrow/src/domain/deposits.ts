import { ESCROW_PRESET, escrowDepositTypedData, escrowId, escrowTermsProblem, escrowTotal, type EscrowTerms, type EscrowToken } from "@c402/evm-contracts";
import { ProblemError } from "@c402/problems";
import { getAddress, isAddress, isHex, recoverTypedDataAddress, type Address, type Hex } from "viem";
import type { StoredAuthorization, StoredTerms } from "../store/escrow-store";
import type { TermsPreset } from "./windows";

/**
 * A deposit as payments presents it (ADR 19): the terms the buyer signed and
 * their EIP-3009 ReceiveWithAuthorization to the escrow contract. Checked
 * here before anything is recorded, with the contract's own rules (the terms:
 * `escrowTermsProblem`; the authorization: its nonce is the terms' escrow id,
 * its signer the buyer, its time window open), so a refusal reads the same
 * whether it came from the service or would have come from the chain.
 */

/** The escrow contract a deposit is made to: its chain, its address, and the token its deposits are in. */
export interface EscrowContract {
  network: string;
  chainId: number;
  address: Address;
  token: EscrowToken;
}

export interface DepositTermsText {
  buyer: string;
  seller: string;
  platform: string;
  feeTo: string;
  arbiter: string;
  amount: string;
  platformAmount: string;
  fee: string;
  preset: TermsPreset | undefined;
  settleSeconds: number;
  holdSeconds: number;
  backstopSeconds: number;
  salt: string;
}

export interface DepositAuthorizationText {
  validAfter: string;
  validBefore: string;
  nonce: string;
  signature: string;
}

/** A deposit that passed every check: the terms as the contract takes them, their escrow id and the authorization. */
export interface CheckedDeposit {
  terms: EscrowTerms;
  escrowId: Hex;
  validAfter: bigint;
  validBefore: bigint;
  signature: Hex;
  total: bigint;
}

/** A refusal of a deposit: the payment is rejected (FAILED_PRECONDITION), with a reason a buyer can read. */
export function depositRefused(reason: string, code: string): ProblemError {
  return new ProblemError("payment-required", { message: `The escrow deposit was refused: ${reason}.`, extensions: { reason: code } });
}

const UINT = /^[0-9]{1,78}$/;

function address(text: string, what: string): Address {
  if (!isAddress(text, { strict: false })) throw depositRefused(`the ${what} is not an EVM address`, "invalid_terms");
  return getAddress(text);
}

function amount(text: string, what: string): bigint {
  if (!UINT.test(text)) throw depositRefused(`the ${what} is not an amount in USDC atomic units`, "invalid_terms");
  return BigInt(text);
}

/** The terms as the contract's EscrowTerms, or the refusal of the first field that cannot be one. */
export function termsOf(t: DepositTermsText): EscrowTerms {
  if (t.preset === undefined) throw depositRefused("the terms name no preset", "invalid_terms");
  if (!isHex(t.salt) || t.salt.length !== 66) throw depositRefused("the salt is not 32 bytes of hex", "invalid_terms");
  return {
    buyer: address(t.buyer, "buyer"),
    seller: address(t.seller, "seller"),
    platform: address(t.platform, "platform"),
    feeTo: address(t.feeTo, "fee wallet"),
    arbiter: address(t.arbiter, "arbiter"),
    amount: amount(t.amount, "amount"),
    platformAmount: amount(t.platformAmount, "platform amount"),
    fee: amount(t.fee, "fee"),
    settleWindow: BigInt(t.settleSeconds),
    holdWindow: BigInt(t.holdSeconds),
    backstopWindow: BigInt(t.backstopSeconds),
    preset: ESCROW_PRESET[t.preset],
    salt: t.salt.toLowerCase() as Hex,
  };
}

/**
 * Every check a deposit passes before it is recorded: the terms (the contract's rules), the
 * authorization's nonce (the terms' escrow id on this contract), its time window at `nowSeconds`, and
 * its signature (recovered from the ReceiveWithAuthorization typed data: it must be the buyer's).
 */
export async function checkDeposit(
  contract: EscrowContract,
  text: DepositTermsText,
  auth: DepositAuthorizationText,
  nowSeconds: bigint,
): Promise<CheckedDeposit> {
  const terms = termsOf(text);
  const problem = escrowTermsProblem(terms);
  if (problem) throw depositRefused(`the terms are invalid (${problem})`, "invalid_terms");
  const id = escrowId(terms, contract.chainId, contract.address);
  if (auth.nonce.toLowerCase() !== id.toLowerCase()) throw depositRefused("the authorization's nonce is not the escrow id of these terms", "nonce_mismatch");
  if (!UINT.test(auth.validAfter) || !UINT.test(auth.validBefore))
    throw depositRefused("the authorization's time window is not a pair of unix times", "invalid_authorization");
  const validAfter = BigInt(auth.validAfter);
  const validBefore = BigInt(auth.validBefore);
  if (validBefore <= nowSeconds) throw depositRefused("the authorization has expired", "authorization_expired");
  if (validAfter > nowSeconds) throw depositRefused("the authorization is not valid yet", "authorization_not_yet_valid");
  if (!isHex(auth.signature) || auth.signature.length !== 132) throw depositRefused("the signature is not 65 bytes of hex", "invalid_signature");
  const signature = auth.signature as Hex;
  const typed = escrowDepositTypedData({ chainId: contract.chainId, escrow: contract.address, token: contract.token, terms, validAfter, validBefore });
  let signer: Address;
  try {
    signer = await recoverTypedDataAddress({ ...typed, signature });
  } catch {
    throw depositRefused("the signature cannot be read", "invalid_signature");
  }
  if (signer !== terms.buyer) throw depositRefused("the authorization is not signed by the buyer", "invalid_signature");
  return { terms, escrowId: id, validAfter, validBefore, signature, total: escrowTotal(terms) };
}

export function storedTerms(t: EscrowTerms): StoredTerms {
  return {
    buyer: t.buyer,
    seller: t.seller,
    platform: t.platform,
    feeTo: t.feeTo,
    arbiter: t.arbiter,
    amount: t.amount.toString(),
    platformAmount: t.platformAmount.toString(),
    fee: t.fee.toString(),
    settleWindow: t.settleWindow.toString(),
    holdWindow: t.holdWindow.toString(),
    backstopWindow: t.backstopWindow.toString(),
    preset: t.preset,
    salt: t.salt,
  };
}

export function termsOfStored(t: StoredTerms): EscrowTerms {
  return {
    buyer: t.buyer as Address,
    seller: t.seller as Address,
    platform: t.platform as Address,
    feeTo: t.feeTo as Address,
    arbiter: t.arbiter as Address,
    amount: BigInt(t.amount),
    platformAmount: BigInt(t.platformAmount),
    fee: BigInt(t.fee),
    settleWindow: BigInt(t.settleWindow),
    holdWindow: BigInt(t.holdWindow),
    backstopWindow: BigInt(t.backstopWindow),
    preset: t.preset,
    salt: t.salt as Hex,
  };
}

export function storedAuthorization(d: CheckedDeposit): StoredAuthorization {
  return { validAfter: d.validAfter.toString(), validBefore: d.validBefore.toString(), nonce: d.escrowId, signature: d.signature };
}
