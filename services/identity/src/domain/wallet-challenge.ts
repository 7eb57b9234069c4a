import { ProblemError, invalid } from "@c402/problems";
import { randomBase62 } from "@c402/ids";
import { getAddress, isAddress } from "viem";

/**
 * Wallet sign-in. The challenge is an EIP-4361 (Sign-In with Ethereum) message
 * naming this service, the wallet, the chain and a single-use nonce; the
 * wallet signs it with EIP-191 (personal_sign). Limits from the spec: address
 * 4–128 characters, network 3–64; message 1–4000, signature 1–2048.
 */
export const LIMITS = {
  address: { min: 4, max: 128 },
  network: { min: 3, max: 64 },
  message: { min: 1, max: 4000 },
  signature: { min: 1, max: 2048 },
};

export interface ChallengeInput {
  address: string;
  network: string;
}

export interface ParsedNetwork {
  family: "eip155";
  chainId: number;
}

function lengthError(field: string, value: string, { min, max }: { min: number; max: number }) {
  if (value.length < min || value.length > max) return { field, reason: `must be ${min} to ${max} characters` };
  return null;
}

/** Validates a challenge request; only EVM (eip155) wallets can sign in so far. */
export function validateChallenge(input: ChallengeInput): { address: `0x${string}`; network: ParsedNetwork } {
  const errors = [lengthError("address", input.address, LIMITS.address), lengthError("network", input.network, LIMITS.network)].filter(
    (e): e is { field: string; reason: string } => e !== null,
  );
  if (errors.length) throw invalid(errors);
  const m = /^eip155:([1-9][0-9]{0,15})$/.exec(input.network);
  if (!m) {
    throw invalid([{ field: "network", reason: "must be a CAIP-2 EVM network such as eip155:8453; other wallet families cannot sign in yet" }]);
  }
  if (!isAddress(input.address, { strict: false })) throw invalid([{ field: "address", reason: "must be a 0x-prefixed 20-byte EVM address" }]);
  if (hasWrongChecksum(input.address)) {
    throw invalid([{ field: "address", reason: "has a wrong EIP-55 checksum (mixed case); send it checksummed exactly, or all lowercase" }]);
  }
  return { address: getAddress(input.address), network: { family: "eip155", chainId: Number(m[1]) } };
}

/**
 * EIP-55: mixed-case hex carries a checksum, and a wrong one means a mistyped
 * address. Single-case hex (all lower or all upper) carries none and is taken as is.
 */
function hasWrongChecksum(address: string): boolean {
  const hex = address.slice(2);
  const mixedCase = hex !== hex.toLowerCase() && hex !== hex.toUpperCase();
  return mixedCase && !isAddress(address, { strict: true });
}

export function newChallengeNonce(): string {
  return randomBase62(24);
}

export function challengeMessage(opts: { baseUrl: string; address: string; chainId: number; nonce: string; issuedAt: Date; expiresAt: Date }): string {
  const url = new URL(opts.baseUrl);
  return [
    `${url.host} wants you to sign in with your Ethereum account:`,
    opts.address,
    "",
    "Sign in to sell with x402 checkouts. This request will not trigger a blockchain transaction or cost any fees.",
    "",
    `URI: ${opts.baseUrl}`,
    "Version: 1",
    `Chain ID: ${opts.chainId}`,
    `Nonce: ${opts.nonce}`,
    `Issued At: ${opts.issuedAt.toISOString()}`,
    `Expiration Time: ${opts.expiresAt.toISOString()}`,
  ].join("\n");
}

/** Extracts the nonce from a challenge message (the stored message is then compared whole). */
export function nonceOf(message: string): string | undefined {
  return /^Nonce: ([0-9A-Za-z]{24})$/m.exec(message)?.[1];
}

export function validateVerify(input: { message: string; signature: string }): void {
  const errors = [lengthError("message", input.message, LIMITS.message), lengthError("signature", input.signature, LIMITS.signature)].filter(
    (e): e is { field: string; reason: string } => e !== null,
  );
  if (!errors.length && !/^0x[0-9a-fA-F]+$/.test(input.signature)) errors.push({ field: "signature", reason: "must be 0x-prefixed hex" });
  if (errors.length) throw invalid(errors);
}

export const challengeRejected = () =>
  new ProblemError("unauthenticated", {
    message: "The challenge is unknown, expired, already used, or the signature does not match it.",
    help: { fix: "Request a fresh challenge with POST /auth/wallet/challenge and sign it unchanged.", retry_is_safe: false },
  });
