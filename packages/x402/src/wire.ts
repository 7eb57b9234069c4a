import { isStellarAsset, isStellarNetworkId, isStellarPayTo, MAX_STELLAR_TRANSACTION_BYTES } from "./stellar";
import { BASE58_ADDRESS, isSolanaNetworkId, MAX_SVM_TRANSACTION_BYTES } from "./svm";

/**
 * x402 wire format: header encodings and the JSON shapes of v1 and v2, as the
 * official clients read and write them (docs: shared/docs/x402-interop.md §1).
 */

export const HEADERS = {
  paymentRequired: "PAYMENT-REQUIRED",
  paymentSignature: "PAYMENT-SIGNATURE",
  paymentResponse: "PAYMENT-RESPONSE",
  legacyPayment: "X-PAYMENT",
  legacyPaymentResponse: "X-PAYMENT-RESPONSE",
} as const;

/** Largest payment header we decode; a real EIP-3009 payload is about 1 KB. */
export const MAX_PAYMENT_HEADER_BYTES = 16 * 1024;

export interface PaymentRequirements {
  scheme: string;
  network: string;
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
  /** v1 names the resource per requirement; v2 clients ignore it. */
  resource?: string;
}

export interface ResourceInfo {
  url: string;
  description?: string;
  mimeType?: string;
}

export interface PaymentRequired {
  x402Version: 2;
  error?: string;
  resource: ResourceInfo;
  accepts: PaymentRequirements[];
  extensions?: Record<string, unknown>;
}

export interface ExactEvmAuthorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

export interface ExactEvmPayload {
  signature: string;
  authorization: ExactEvmAuthorization;
  /**
   * An `escrow` payment's terms salt (0x and 64 hex digits), as the service's
   * prepare answer gave it: with the checkout and the payer it rebuilds the
   * terms whose escrow id the authorization's nonce is. Absent in `exact`.
   */
  salt?: string;
}

/** An `exact` SVM payload: a transaction the payer signed, with the facilitator's fee-payer slot left for it (x402-interop §3). */
export interface ExactSvmPayload {
  transaction: string;
}

/**
 * An `exact` Stellar payload: the base64 XDR of a transaction of one
 * InvokeHostFunction calling the asset contract's `transfer`, its Soroban
 * authorization entry signed by the payer (the transaction itself unsigned:
 * the facilitator rebuilds it as its own).
 */
export interface ExactStellarPayload {
  transaction: string;
}

/** A payment payload; EVM's unless said otherwise. */
export interface PaymentPayload<P extends ExactEvmPayload | ExactSvmPayload | ExactStellarPayload = ExactEvmPayload> {
  x402Version: 1 | 2;
  /** v2: the requirement the client chose, echoed verbatim. */
  accepted?: PaymentRequirements;
  /** v1: scheme and network name at the top level. */
  scheme?: string;
  network?: string;
  resource?: ResourceInfo;
  payload: P;
  extensions?: Record<string, unknown>;
}

export interface VerifyResponse {
  isValid: boolean;
  invalidReason?: string;
  invalidMessage?: string;
  payer?: string;
}

export interface SettleResponse {
  success: boolean;
  errorReason?: string;
  errorMessage?: string;
  payer?: string;
  transaction: string;
  network: string;
}

const STANDARD_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Standard, padded base64 of the UTF-8 JSON (what the official decoders accept). */
export function encodeHeader(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64");
}

export class PaymentHeaderError extends Error {
  constructor(
    readonly reason: "invalid_payload" | "invalid_x402_version",
    message: string,
  ) {
    super(message);
    this.name = "PaymentHeaderError";
  }
}

/** Decodes a base64 JSON header strictly: bounded size, standard alphabet, an object. */
export function decodeHeader(value: string, maxBytes = MAX_PAYMENT_HEADER_BYTES): Record<string, unknown> {
  if (value.length === 0) throw new PaymentHeaderError("invalid_payload", "The payment header is empty.");
  if (value.length > Math.ceil((maxBytes * 4) / 3) + 4) {
    throw new PaymentHeaderError("invalid_payload", `The payment header is larger than ${maxBytes} bytes.`);
  }
  if (!STANDARD_BASE64.test(value) || value.length % 4 !== 0) {
    throw new PaymentHeaderError("invalid_payload", "The payment header must be standard padded base64 of JSON.");
  }
  const text = Buffer.from(value, "base64").toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new PaymentHeaderError("invalid_payload", "The payment header does not decode to JSON.");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new PaymentHeaderError("invalid_payload", "The payment header must decode to a JSON object.");
  }
  return parsed as Record<string, unknown>;
}

/** An EVM address (any case) and an EIP-3009 nonce (32 bytes), as 0x-hex: the payload parser and the digest (evm.ts) both hold to these. */
export const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
export const NONCE = /^0x[0-9a-fA-F]{64}$/;
const UINT = /^(0|[1-9][0-9]{0,77})$/;
export const MAX_UINT256 = (1n << 256n) - 1n;

/** A decimal uint256 as EIP-3009 takes it: no sign, no leading zeros, at most 2^256 - 1. */
export function isUint256(value: string): boolean {
  return UINT.test(value) && BigInt(value) <= MAX_UINT256;
}
const SIGNATURE = /^0x[0-9a-fA-F]{130,}$/;

function str(o: Record<string, unknown>, key: string): string | undefined {
  const v = o[key];
  return typeof v === "string" ? v : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A payment payload of any family: EVM (an EIP-3009 authorization), Solana (a
 * partially signed transaction) or Stellar (a transaction with a signed
 * authorization entry).
 */
export type AnyPaymentPayload = PaymentPayload<ExactEvmPayload> | PaymentPayload<ExactSvmPayload> | PaymentPayload<ExactStellarPayload>;

/** The network a payload names: v2's `accepted.network`, v1's `network`. */
export function networkOfPayload(p: AnyPaymentPayload): string {
  return p.accepted?.network ?? p.network ?? "";
}

/** Solana and Stellar payloads have one shape (`{ transaction }`): the network tells them apart. */
export function isSvmPayload(p: AnyPaymentPayload): p is PaymentPayload<ExactSvmPayload> {
  return "transaction" in p.payload && isSolanaNetworkId(networkOfPayload(p));
}

export function isStellarPayload(p: AnyPaymentPayload): p is PaymentPayload<ExactStellarPayload> {
  return "transaction" in p.payload && isStellarNetworkId(networkOfPayload(p));
}

export function isEvmPayload(p: AnyPaymentPayload): p is PaymentPayload<ExactEvmPayload> {
  return "authorization" in p.payload;
}

/**
 * Validates the shape of an `exact` payment payload (v1 or v2) and returns it
 * typed: the network it names (v2: `accepted.network`; v1: `network`) decides
 * whether it must carry an EVM authorization, a Solana transaction or a
 * Stellar one. Field
 * values are checked for format only; binding to what was issued is the
 * verifier's job.
 */
export function parsePaymentPayload(raw: Record<string, unknown>): AnyPaymentPayload {
  const version = raw.x402Version;
  if (version !== 1 && version !== 2) {
    throw new PaymentHeaderError("invalid_x402_version", "x402Version must be 1 or 2.");
  }
  const payload = raw.payload;
  if (!isRecord(payload)) throw new PaymentHeaderError("invalid_payload", "payload must be an object.");
  const envelope: Omit<PaymentPayload, "payload"> = { x402Version: version };
  if (version === 2) {
    const accepted = raw.accepted;
    if (!isRecord(accepted)) throw new PaymentHeaderError("invalid_payload", "accepted must echo the chosen requirement.");
    envelope.accepted = parseRequirements(accepted);
    if (isRecord(raw.resource) && typeof raw.resource.url === "string") envelope.resource = { url: raw.resource.url };
  } else {
    const scheme = str(raw, "scheme");
    const network = str(raw, "network");
    if (!scheme || !network) throw new PaymentHeaderError("invalid_payload", "scheme and network are required in a v1 payload.");
    envelope.scheme = scheme;
    envelope.network = network;
  }
  const network = envelope.accepted?.network ?? (envelope.network as string);
  if (isSolanaNetworkId(network)) return { ...envelope, payload: parseTransactionPayload(payload, MAX_SVM_TRANSACTION_BYTES, "a Solana transaction") };
  if (isStellarNetworkId(network))
    return { ...envelope, payload: parseTransactionPayload(payload, MAX_STELLAR_TRANSACTION_BYTES, "a Stellar transaction's XDR") };
  return { ...envelope, payload: parseEvmPayload(payload) };
}

function parseEvmPayload(payload: Record<string, unknown>): ExactEvmPayload {
  const signature = str(payload, "signature");
  const auth = payload.authorization;
  if (!signature || !SIGNATURE.test(signature) || signature.length > 2 + 2 * 4096) {
    throw new PaymentHeaderError("invalid_payload", "payload.signature must be a 0x-hex signature.");
  }
  if (!isRecord(auth)) throw new PaymentHeaderError("invalid_payload", "payload.authorization must be an object.");
  const authorization: Record<string, string> = {};
  const address = (v: string) => ADDRESS.test(v);
  const nonce = (v: string) => NONCE.test(v);
  for (const [key, valid] of [
    ["from", address],
    ["to", address],
    ["value", isUint256],
    ["validAfter", isUint256],
    ["validBefore", isUint256],
    ["nonce", nonce],
  ] as const) {
    const v = str(auth, key);
    if (v === undefined || !valid(v)) {
      throw new PaymentHeaderError("invalid_payload", `payload.authorization.${key} is missing or malformed.`);
    }
    authorization[key] = v;
  }
  const salt = payload.salt;
  if (salt !== undefined && (typeof salt !== "string" || !NONCE.test(salt))) {
    throw new PaymentHeaderError("invalid_payload", "payload.salt must be 0x and 64 hex digits.");
  }
  return { signature, authorization: authorization as unknown as ExactEvmAuthorization, ...(salt !== undefined ? { salt } : {}) };
}

/** Standard base64 of at most maxBytes (Solana's or Stellar's bound): what the transaction holds is the rail's to check. */
function parseTransactionPayload(payload: Record<string, unknown>, maxBytes: number, what: string): { transaction: string } {
  const transaction = str(payload, "transaction");
  const maxChars = Math.ceil(maxBytes / 3) * 4;
  if (!transaction || transaction.length > maxChars || transaction.length % 4 !== 0 || !STANDARD_BASE64.test(transaction)) {
    throw new PaymentHeaderError("invalid_payload", `payload.transaction must be standard base64 of ${what} (at most ${maxBytes} bytes).`);
  }
  return { transaction };
}

/** How a network's family writes a requirement's asset and payTo, and how to say so. */
function addressRules(network: string): { asset: (v: string) => boolean; payTo: (v: string) => boolean; asAsset: string; asPayTo: string } {
  if (isSolanaNetworkId(network)) {
    const base58 = (v: string) => BASE58_ADDRESS.test(v);
    return { asset: base58, payTo: base58, asAsset: "a base58 Solana address", asPayTo: "a base58 Solana address" };
  }
  if (isStellarNetworkId(network)) {
    return {
      asset: isStellarAsset,
      payTo: isStellarPayTo,
      asAsset: "a Soroban token contract id (C…)",
      asPayTo: "a Stellar account id (G…) or contract id (C…)",
    };
  }
  const evm = (v: string) => ADDRESS.test(v);
  return { asset: evm, payTo: evm, asAsset: "a 0x-prefixed EVM address", asPayTo: "a 0x-prefixed EVM address" };
}

/**
 * Validates an `exact` payment requirement (v2 shape): every core field
 * present, `asset` and `payTo` addresses of the network's family (0x EVM
 * addresses, base58 Solana keys, or Stellar strkeys with their checksum),
 * `amount` a uint256 and the timeout a positive integer. `what` names it in
 * the message.
 */
export function parseRequirements(r: Record<string, unknown>, what = "accepted"): PaymentRequirements {
  const scheme = str(r, "scheme");
  const network = str(r, "network");
  const asset = str(r, "asset");
  const amount = str(r, "amount");
  const payTo = str(r, "payTo");
  const timeout = r.maxTimeoutSeconds;
  if (!scheme || !network || !asset || !amount || !payTo || typeof timeout !== "number" || !Number.isSafeInteger(timeout) || timeout <= 0) {
    throw new PaymentHeaderError("invalid_payload", `${what} is not a complete payment requirement.`);
  }
  const rules = addressRules(network);
  if (!rules.asset(asset)) throw new PaymentHeaderError("invalid_payload", `${what}.asset must be ${rules.asAsset}.`);
  if (!rules.payTo(payTo)) throw new PaymentHeaderError("invalid_payload", `${what}.payTo must be ${rules.asPayTo}.`);
  if (!isUint256(amount)) throw new PaymentHeaderError("invalid_payload", `${what}.amount must be a decimal integer of at most 2^256 - 1.`);
  const extra = isRecord(r.extra) ? r.extra : {};
  return { scheme, network, asset, amount, payTo, maxTimeoutSeconds: timeout, extra };
}

/**
 * The 2.27 official matching rule: every core field equal, and every `extra`
 * key the server declared present with the same value (the client may add keys).
 * EVM addresses compare without case (checksums are spelling); base58 and
 * Stellar's strkeys are case-sensitive (one spelling per key), so on Solana
 * and Stellar they compare exactly.
 */
export function acceptedMatches(accepted: PaymentRequirements, issued: PaymentRequirements): boolean {
  return (
    accepted.scheme === issued.scheme &&
    accepted.network === issued.network &&
    sameAddress(accepted.network, accepted.asset, issued.asset) &&
    accepted.amount === issued.amount &&
    sameAddress(accepted.network, accepted.payTo, issued.payTo) &&
    accepted.maxTimeoutSeconds === issued.maxTimeoutSeconds &&
    Object.entries(issued.extra).every(([k, v]) => JSON.stringify(accepted.extra[k]) === JSON.stringify(v))
  );
}

function sameAddress(network: string, a: string, b: string): boolean {
  return isSolanaNetworkId(network) || isStellarNetworkId(network) ? a === b : a.toLowerCase() === b.toLowerCase();
}
