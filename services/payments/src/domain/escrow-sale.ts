import { ESCROW_PRESET, escrowDepositTypedData, escrowId, escrowTermsProblem, ZERO_ADDRESS, type EscrowTerms, type EscrowToken } from "@c402/evm-contracts";
import type { PaymentPayload, PaymentRequirements } from "@c402/x402";
import { getAddress, isAddress, recoverTypedDataAddress, type Address, type Hex } from "viem";
import { priceOf, type CheckoutEscrowTerms, type CheckoutForPayment } from "./requirements";
import { paymentRejected } from "./verify-payment";

/**
 * The x402 scheme of an escrow deposit (ADR 19). Not `exact`: an `exact`
 * client signs a TransferWithAuthorization with a random nonce, which cannot
 * carry the escrow's terms; a deposit is a ReceiveWithAuthorization to the
 * escrow contract whose nonce is the terms' EIP-712 digest (the escrow id).
 */
export const ESCROW_SCHEME = "escrow";

/** One network escrow deposits are made on: the escrow contract there, the token that funds it and who receives the fee. */
export interface EscrowNetwork {
  network: string;
  chainId: number;
  /** The C402Escrow contract: a deposit's payTo and its terms' EIP-712 verifying contract. */
  contract: Address;
  /** USDC there, with its EIP-712 domain (a rehearsal's: the rehearsal domain no token has, ADR 5). */
  token: EscrowToken;
  /** The protocol's fee wallet (the terms' feeTo). */
  feeTo: Address;
}

/** Seconds as a person reads a window: "7 days", "24 hours", "90 minutes". */
export function windowWords(seconds: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (seconds % 86_400 === 0) return unit(seconds / 86_400, "day");
  if (seconds % 3_600 === 0) return unit(seconds / 3_600, "hour");
  return unit(Math.round(seconds / 60), "minute");
}

/**
 * The `extra.escrow` of an escrow checkout's requirement (spec, Escrow): its
 * windows, the arbiter, both exit routes and what happens if nobody acts. A
 * pure function of the checkout (no dates), so a presented payment's echoed
 * requirement matches it exactly.
 */
export function escrowExtra(terms: CheckoutEscrowTerms & { arbiterEvm: string }): Record<string, unknown> {
  const settle = windowWords(terms.settleSeconds);
  return {
    preset: terms.preset,
    settle_seconds: terms.settleSeconds,
    hold_seconds: terms.holdSeconds,
    backstop_seconds: terms.backstopSeconds,
    arbiter: terms.arbiterEvm,
    exits: {
      seller_paid: `Released to the seller when the buyer approves, when the ${settle} settle window ends with no action (or the buyer's ${windowWords(terms.holdSeconds)} hold ends), or when the arbiter rules for the seller.`,
      buyer_refunded: `Refunded to the buyer when the seller cancels, when the arbiter rules for the buyer, or when the arbiter has not ruled ${windowWords(terms.backstopSeconds)} after the buyer asked for a refund.`,
    },
    if_nobody_acts: `If nobody acts, the payment is released to the seller ${settle} after the deposit.`,
  };
}

/** An escrow checkout's terms with an EVM arbiter (the only escrow rail offered, ADR 19); undefined when it has none. */
export function evmEscrowTermsOf(checkout: CheckoutForPayment): (CheckoutEscrowTerms & { arbiterEvm: string }) | undefined {
  const terms = checkout.escrow;
  if (!terms?.arbiterEvm) return undefined;
  return { ...terms, arbiterEvm: terms.arbiterEvm };
}

/**
 * The terms of one deposit, as the contract's EscrowTerms: the checkout's
 * frozen windows and arbiter, its split at the escrow fee, the payer and the
 * salt. Prepare and verify both build them here, so the escrow id a buyer
 * signs is the one verify recomputes.
 */
export function depositTermsOf(checkout: CheckoutForPayment, at: EscrowNetwork, payer: string, salt: Hex): EscrowTerms {
  const terms = evmEscrowTermsOf(checkout);
  if (!terms) throw paymentRejected("invalid_escrow_terms", "This checkout names no EVM arbiter, so it offers no escrow deposit on this network.");
  const split = priceOf(checkout);
  const platformAmount = split.platformAmount ?? 0n;
  return {
    buyer: getAddress(payer),
    seller: getAddress(checkout.payTo),
    platform: platformAmount > 0n && checkout.platform ? getAddress(checkout.platform.feeTo) : ZERO_ADDRESS,
    feeTo: getAddress(at.feeTo),
    arbiter: getAddress(terms.arbiterEvm),
    amount: split.providerAmount,
    platformAmount,
    fee: split.feeAmount,
    settleWindow: BigInt(terms.settleSeconds),
    holdWindow: BigInt(terms.holdSeconds),
    backstopWindow: BigInt(terms.backstopSeconds),
    preset: ESCROW_PRESET[terms.preset],
    salt,
  };
}

/** The EIP-712 typed data a deposit's authorization is signed over: the contract package's own (ReceiveWithAuthorization, nonce = escrow id). */
export function depositTypedData(at: EscrowNetwork, terms: EscrowTerms, validAfter: bigint, validBefore: bigint) {
  return escrowDepositTypedData({ chainId: at.chainId, escrow: at.contract, token: at.token, terms, validAfter, validBefore });
}

/** Seconds of room a deposit needs before validBefore (as an exact payment's settlement, verify-payment.ts). */
const VALID_BEFORE_MARGIN_SECONDS = 6;

/** A deposit that passed every check: its terms and escrow id, for the escrow service's Deposit. */
export interface VerifiedDeposit {
  terms: EscrowTerms;
  escrowId: Hex;
}

/**
 * Verifies an escrow deposit against the requirement it claims (nothing
 * written, no chain asked): the terms rebuilt from the checkout, the payer
 * and the salt the payload brings back must be ones the contract accepts and
 * have the authorization's nonce as their escrow id (a changed salt, payer
 * or term changes the id); then the recipient (the contract), the exact
 * amount, the validity window, and the payer's signature over the token's
 * ReceiveWithAuthorization.
 */
export async function verifyDeposit(
  checkout: CheckoutForPayment,
  at: EscrowNetwork,
  payload: PaymentPayload,
  requirement: PaymentRequirements,
  nowSeconds: number,
): Promise<VerifiedDeposit> {
  const a = payload.payload.authorization;
  const salt = payload.payload.salt;
  if (salt === undefined) {
    throw paymentRejected("invalid_escrow_salt_missing", "An escrow payment brings back the salt its prepare answer gave (payload.salt).");
  }
  if (!isAddress(a.from, { strict: false })) throw paymentRejected("invalid_payload", "payload.authorization.from is not an address.");
  if (getAddress(a.to) !== getAddress(at.contract) || getAddress(requirement.payTo) !== getAddress(at.contract)) {
    throw paymentRejected("invalid_exact_evm_recipient_mismatch", "The authorization pays a different recipient than the escrow contract.");
  }
  if (a.value !== requirement.amount) {
    throw paymentRejected(
      "invalid_exact_evm_payload_authorization_value_mismatch",
      `The authorization is for ${a.value} atomic units; ${requirement.amount} are required.`,
    );
  }
  const terms = depositTermsOf(checkout, at, a.from, salt as Hex);
  const problem = escrowTermsProblem(terms);
  if (problem) throw paymentRejected("invalid_escrow_terms", `The escrow contract would refuse these terms: ${problem}.`);
  const id = escrowId(terms, at.chainId, at.contract);
  if (a.nonce.toLowerCase() !== id.toLowerCase()) {
    throw paymentRejected(
      "invalid_escrow_nonce",
      "The authorization's nonce is not the escrow id of this checkout's terms for this payer and salt. Prepare the payment again and sign what it answers.",
    );
  }
  if (BigInt(a.validAfter) > BigInt(nowSeconds)) {
    throw paymentRejected("invalid_exact_evm_payload_authorization_valid_after", "The authorization is not valid yet.");
  }
  if (BigInt(a.validBefore) < BigInt(nowSeconds + VALID_BEFORE_MARGIN_SECONDS)) {
    throw paymentRejected("invalid_exact_evm_payload_authorization_valid_before", "The authorization has expired or expires too soon to deposit.");
  }
  const typed = depositTypedData(at, terms, BigInt(a.validAfter), BigInt(a.validBefore));
  let signer: Address | undefined;
  try {
    signer = await recoverTypedDataAddress({ ...typed, signature: payload.payload.signature as Hex });
  } catch {
    signer = undefined;
  }
  if (signer !== getAddress(a.from)) {
    throw paymentRejected("invalid_exact_evm_signature", "The signature is not the payer's over this deposit's ReceiveWithAuthorization.");
  }
  return { terms, escrowId: id };
}
