import { checkStellarAddress } from "@c402/chain-addresses";
import { ProblemError, invalid } from "@c402/problems";
import { randomBase62 } from "@c402/ids";
import { getAddress, isAddress } from "viem";

/**
 * Wallet sign-in. The challenge is a Sign-In with X text message (EIP-4361's
 * layout, CAIP-122 for other chains) naming this service, the account, the
 * network and a single-use nonce. An EVM wallet signs it with EIP-191
 * (personal_sign), a Stellar wallet with SEP-53 (wallet-signatures.ts).
 * Limits from the spec: address 4–128 characters, network 3–64; message
 * 1–4000, signature 1–2048.
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

/** The wallet families that can sign in, by their CAIP-2 namespace (what payout wallets store as `chain_family`). */
export type SignInFamily = "eip155" | "stellar";

/** A network a wallet signs in on, as its CAIP-2 id (`caip2`) and what the message says of it. */
export type SignInNetwork = { family: "eip155"; caip2: string; chainId: number } | { family: "stellar"; caip2: string };

function lengthError(field: string, value: string, { min, max }: { min: number; max: number }) {
  if (value.length < min || value.length > max) return { field, reason: `must be ${min} to ${max} characters` };
  return null;
}

/** The sign-in network a CAIP-2 id names: any EVM chain, or Stellar's public network or testnet. */
export function signInNetwork(caip2: string): SignInNetwork | undefined {
  const evm = /^eip155:([1-9][0-9]{0,15})$/.exec(caip2);
  if (evm) return { family: "eip155", caip2, chainId: Number(evm[1]) };
  if (caip2 === "stellar:pubnet" || caip2 === "stellar:testnet") return { family: "stellar", caip2 };
  return undefined;
}

/** Validates a challenge request: an EVM address on an eip155 network, or a Stellar account id (G…) on stellar:pubnet/testnet. */
export function validateChallenge(input: ChallengeInput): { address: string; network: SignInNetwork } {
  const errors = [lengthError("address", input.address, LIMITS.address), lengthError("network", input.network, LIMITS.network)].filter(
    (e): e is { field: string; reason: string } => e !== null,
  );
  if (errors.length) throw invalid(errors);
  const network = signInNetwork(input.network);
  if (!network) {
    throw invalid([
      {
        field: "network",
        reason: "must be a CAIP-2 network a wallet signs in on: eip155:<chain id> (EVM, such as eip155:8453), stellar:pubnet or stellar:testnet",
      },
    ]);
  }
  return { address: network.family === "stellar" ? stellarSigner(input.address) : evmSigner(input.address), network };
}

function evmSigner(address: string): string {
  if (!isAddress(address, { strict: false })) throw invalid([{ field: "address", reason: "must be a 0x-prefixed 20-byte EVM address" }]);
  if (hasWrongChecksum(address)) {
    throw invalid([{ field: "address", reason: "has a wrong EIP-55 checksum (mixed case); send it checksummed exactly, or all lowercase" }]);
  }
  return getAddress(address);
}

/** A Stellar account id (G…): a muxed (M…) or contract (C…) address has no key of its own that signs. */
function stellarSigner(address: string): string {
  const checked = checkStellarAddress(address);
  if (!checked.ok) throw invalid([{ field: "address", reason: checked.reason }]);
  return checked.address;
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

/** How the message's first line names the account: EIP-4361's wording for EVM, the same sentence for Stellar. */
const ACCOUNT_NAME: Readonly<Record<SignInFamily, string>> = { eip155: "Ethereum", stellar: "Stellar" };

/**
 * The text the wallet shows and signs. EIP-4361 wants the bare EVM chain id;
 * a Stellar network has none, so it is named by its CAIP-2 id, as CAIP-122 does.
 */
export function challengeMessage(opts: { baseUrl: string; address: string; network: SignInNetwork; nonce: string; issuedAt: Date; expiresAt: Date }): string {
  const url = new URL(opts.baseUrl);
  const chainId = opts.network.family === "eip155" ? String(opts.network.chainId) : opts.network.caip2;
  return [
    `${url.host} wants you to sign in with your ${ACCOUNT_NAME[opts.network.family]} account:`,
    opts.address,
    "",
    "Sign in to sell with x402 checkouts. This request will not trigger a blockchain transaction or cost any fees.",
    "",
    `URI: ${opts.baseUrl}`,
    "Version: 1",
    `Chain ID: ${chainId}`,
    `Nonce: ${opts.nonce}`,
    `Issued At: ${opts.issuedAt.toISOString()}`,
    `Expiration Time: ${opts.expiresAt.toISOString()}`,
  ].join("\n");
}

/** Extracts the nonce from a challenge message (the stored message is then compared whole). */
export function nonceOf(message: string): string | undefined {
  return /^Nonce: ([0-9A-Za-z]{24})$/m.exec(message)?.[1];
}

/**
 * The lengths, and a signature written in one of the encodings some family
 * takes (hex, 0x-prefixed or not, or base64). Which one its wallet must use
 * is checked once the challenge says the family (wallet-signatures.ts).
 */
export function validateVerify(input: { message: string; signature: string }): void {
  const errors = [lengthError("message", input.message, LIMITS.message), lengthError("signature", input.signature, LIMITS.signature)].filter(
    (e): e is { field: string; reason: string } => e !== null,
  );
  if (!errors.length && !/^(0x)?[0-9a-fA-F]+$/.test(input.signature) && !isBase64(input.signature)) {
    errors.push({ field: "signature", reason: "must be hex (0x-prefixed for an EVM wallet; for a Stellar wallet, 128 hex digits or their base64)" });
  }
  if (errors.length) throw invalid(errors);
}

function isBase64(text: string): boolean {
  return text.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(text);
}

export const challengeRejected = () =>
  new ProblemError("unauthenticated", {
    message: "The challenge is unknown, expired, already used, or the signature does not match it.",
    help: {
      fix: "Request a fresh challenge with POST /auth/wallet/challenge and sign it unchanged: an EVM wallet with personal_sign (EIP-191), a Stellar wallet with its sign-message (SEP-53).",
      retry_is_safe: false,
    },
  });
