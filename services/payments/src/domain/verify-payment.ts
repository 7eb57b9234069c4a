import { paymentRefused, type ProblemError } from "@c402/problems";
import {
  acceptedMatches,
  decodeHeader,
  authorizationDigest,
  isValidEoaSignature,
  type AnyPaymentPayload,
  type ContractSignatureCheck,
  isEvmPayload,
  parsePaymentPayload,
  PaymentHeaderError,
  type ExactEvmAuthorization,
  type PaymentPayload,
  type PaymentRequirements,
  v1NetworkName,
} from "@c402/x402";
import { getAddress, type Hex } from "viem";
import { settlementFields } from "./payment-wire";

/** x402 reason codes (v2 facilitator vocabulary) for a refused payment. */
export type RejectReason =
  | "invalid_payload"
  | "invalid_x402_version"
  | "invalid_scheme"
  | "invalid_network"
  | "no_matching_requirements"
  | "invalid_exact_evm_recipient_mismatch"
  | "invalid_exact_evm_payload_authorization_value_mismatch"
  | "invalid_exact_evm_payload_authorization_valid_after"
  | "invalid_exact_evm_payload_authorization_valid_before"
  | "invalid_exact_evm_signature"
  | "invalid_exact_evm_nonce_already_used"
  | "invalid_exact_evm_insufficient_balance"
  | "invalid_exact_evm_transaction_simulation_failed"
  | "settlement_failed"
  | "rehearsal_payment_on_live_face"
  | `invalid_escrow_${string}`
  | `invalid_schedule_${string}`
  | `invalid_exact_svm_${string}`
  | `settle_exact_svm_${string}`
  | `invalid_exact_stellar_${string}`
  | `settle_exact_stellar_${string}`;

export function paymentRejected(reason: RejectReason, message: string, prepareHint?: string): ProblemError {
  return paymentRefused(reason, message, prepareHint);
}

/**
 * A payment that was accepted but did not settle: the problem also carries the
 * x402 SettleResponse fields, which the gateway sends as PAYMENT-RESPONSE
 * (as the official server does on a settle failure; a refused verify has none).
 */
export function settlementFailed(reason: RejectReason, message: string, payment: { tx_hash: string | null; network: string; payer: string }): ProblemError {
  const err = paymentRejected(reason, message);
  err.extensions.settlement = settlementFields(payment);
  return err;
}

/** Seconds of room a settlement needs before validBefore (the official facilitator uses 6). */
const VALID_BEFORE_MARGIN_SECONDS = 6;

export interface VerifiedPayment {
  payload: PaymentPayload;
  requirement: PaymentRequirements;
  authorization: ExactEvmAuthorization;
  payer: `0x${string}`;
}

export function decodePayment(header: string): AnyPaymentPayload {
  try {
    return parsePaymentPayload(decodeHeader(header));
  } catch (err) {
    if (err instanceof PaymentHeaderError) throw paymentRejected(err.reason, err.message);
    throw err;
  }
}

/** Finds the issued requirement the payload was made for (v2: `accepted`; v1: scheme + network name). */
export function matchRequirement(payload: AnyPaymentPayload, issued: PaymentRequirements[]): PaymentRequirements {
  if (payload.x402Version === 2) {
    const accepted = payload.accepted as PaymentRequirements;
    // A face issues `exact`, or (an escrow checkout's) `escrow`: the schemes it lists are the ones it takes.
    if (!issued.some((r) => r.scheme === accepted.scheme)) throw paymentRejected("invalid_scheme", `Scheme ${accepted.scheme} is not offered here.`);
    const match = issued.find((r) => acceptedMatches(accepted, r));
    if (!match) throw paymentRejected("no_matching_requirements", "The payment was not made for any requirement this face issued.");
    return match;
  }
  if (!issued.some((r) => r.scheme === payload.scheme)) throw paymentRejected("invalid_scheme", `Scheme ${payload.scheme} is not offered here.`);
  const match = issued.find((r) => r.scheme === payload.scheme && v1NetworkName(r.network) === payload.network);
  if (!match) throw paymentRejected("invalid_network", `Network ${payload.network} is not offered here.`);
  return match;
}

/**
 * The EVM payload of a payment matched to an EVM requirement. The parser
 * shapes a payload by the network it names and matching binds that network to
 * an issued requirement, so this refuses only a payload that reached the
 * wrong rail by a bug, never a buyer's.
 */
export function evmPayloadOf(payload: AnyPaymentPayload): PaymentPayload {
  if (!isEvmPayload(payload)) throw paymentRejected("invalid_payload", "This network takes an EIP-3009 authorization, not a transaction.");
  return payload;
}

/** Who pays with an EVM payload (the authorization's `from`, checksummed); undefined for another family's. */
export function evmPayerOf(payload: AnyPaymentPayload): string | undefined {
  return isEvmPayload(payload) ? getAddress(payload.payload.authorization.from) : undefined;
}

/**
 * Verifies an `exact` EIP-3009 payment against the requirement it claims:
 * recipient, exact amount, time window, then the signature over the token's
 * EIP-712 domain for that network: an EOA's, or (given `contractSignatures`,
 * which asks the chain) a contract wallet's approval under EIP-1271.
 */
export async function verifyPayment(
  payload: PaymentPayload,
  requirement: PaymentRequirements,
  nowSeconds: number,
  contractSignatures?: ContractSignatureCheck,
): Promise<VerifiedPayment> {
  const a = payload.payload.authorization;
  if (getAddress(a.to) !== getAddress(requirement.payTo)) {
    throw paymentRejected("invalid_exact_evm_recipient_mismatch", "The authorization pays a different recipient than the requirement names.");
  }
  if (a.value !== requirement.amount) {
    throw paymentRejected(
      "invalid_exact_evm_payload_authorization_value_mismatch",
      `The authorization is for ${a.value} atomic units; ${requirement.amount} are required.`,
    );
  }
  if (BigInt(a.validAfter) > BigInt(nowSeconds)) {
    throw paymentRejected("invalid_exact_evm_payload_authorization_valid_after", "The authorization is not valid yet.");
  }
  if (BigInt(a.validBefore) < BigInt(nowSeconds + VALID_BEFORE_MARGIN_SECONDS)) {
    throw paymentRejected("invalid_exact_evm_payload_authorization_valid_before", "The authorization has expired or expires too soon to settle.");
  }
  const signature = payload.payload.signature as Hex;
  const signed =
    (await isValidEoaSignature(requirement, a, signature)) ||
    (contractSignatures !== undefined && (await contractSignatures(getAddress(a.from), authorizationDigest(requirement, a), signature)));
  if (!signed) {
    throw paymentRejected("invalid_exact_evm_signature", "The signature does not match the authorization and the token's EIP-712 domain.");
  }
  return { payload, requirement, authorization: a, payer: getAddress(a.from) };
}

/** The x402 reason for a failed settle simulation (see EvmChain.simulate*). */
export function simulationRejectReason(reason: string): RejectReason {
  if (reason === "insufficient_funds") return "invalid_exact_evm_insufficient_balance";
  if (reason === "nonce_used") return "invalid_exact_evm_nonce_already_used";
  return "invalid_exact_evm_transaction_simulation_failed";
}
