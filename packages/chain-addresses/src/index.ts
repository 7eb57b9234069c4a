import { base32nopad, base58 } from "@scure/base";
import { getAddress, isAddress } from "viem";

/**
 * Payout addresses per chain family: the names the REST API uses for a chain
 * (the spec's facilitator families), the CAIP-2 namespace identity and
 * catalog store them under, and the checks an address must pass before money
 * is routed to it. Every check refuses a typo rather than guessing: a
 * checksum that does not match is a mistyped address, and money sent there is
 * lost.
 */

/** The chains a seller can be paid on, as the REST API names them (`/x402/{family}`, `chain` of a payout rail). */
export const PAYOUT_CHAINS = ["base", "solana", "stellar"] as const;
export type PayoutChain = (typeof PAYOUT_CHAINS)[number];

/** The CAIP-2 namespace of each chain: what identity and catalog store as a wallet's or rail's `chain_family`. */
export const CHAIN_FAMILY: Readonly<Record<PayoutChain, string>> = { base: "eip155", solana: "solana", stellar: "stellar" };

export function isPayoutChain(text: string): text is PayoutChain {
  return (PAYOUT_CHAINS as readonly string[]).includes(text);
}

/** The chain whose addresses a stored `chain_family` holds, or undefined for a family this service does not know. */
export function chainOfFamily(family: string): PayoutChain | undefined {
  return PAYOUT_CHAINS.find((c) => CHAIN_FAMILY[c] === family);
}

/**
 * The chains whose payout rails a checkout's faces offer in this build: Base
 * (the live EVM networks payments settles, and the rehearsal network), Solana
 * (where the deployment exposes it: SOLANA_ENABLED; ADR 15, 16) and Stellar
 * (where the deployment settles on it: STELLAR_NETWORK; not for checkouts with
 * a platform cut, ADR 17).
 */
export const OFFERED_CHAINS: readonly PayoutChain[] = ["base", "solana", "stellar"];

export type AddressCheck = { ok: true; address: string } | { ok: false; reason: string };

const refused = (reason: string): AddressCheck => ({ ok: false, reason });

/**
 * An EVM address, answered EIP-55 checksummed. A mixed-case address carries a
 * checksum and must match it; all-lowercase or all-uppercase hex carries none
 * and is taken as written. The zero address is refused: nothing can spend
 * what is sent there.
 */
export function checkEvmAddress(text: string): AddressCheck {
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) return refused("must be an EVM address: 0x and 40 hex digits");
  const hex = text.slice(2);
  const caseless = hex === hex.toLowerCase() || hex === hex.toUpperCase();
  if (!caseless && !isAddress(text, { strict: true })) return refused("has a wrong EIP-55 checksum (check the address, or send it all lowercase)");
  if (/^0{40}$/.test(hex)) return refused("is the zero address, which nobody can spend from");
  return { ok: true, address: getAddress(text) };
}

/**
 * A Solana address: base58 (Bitcoin alphabet) decoding to exactly 32 bytes,
 * answered as written (base58 has one spelling per key). The all-zero key
 * (the System Program's id) is refused.
 */
export function checkSolanaAddress(text: string): AddressCheck {
  if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(text)) return refused("must be a Solana address: 32 to 44 base58 characters");
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(text);
  } catch {
    return refused("must be a Solana address: 32 to 44 base58 characters");
  }
  if (bytes.length !== 32) return refused(`must decode to a 32-byte public key (this decodes to ${bytes.length} bytes)`);
  if (bytes.every((b) => b === 0)) return refused("is the System Program's address, not a wallet");
  return { ok: true, address: text };
}

/** Version bytes of the Stellar strkeys this service reads: an account id (`G…`, ed25519 key, 6 << 3) and a contract id (`C…`, 2 << 3). */
const STELLAR_ACCOUNT_VERSION = 6 << 3;
const STELLAR_CONTRACT_VERSION = 2 << 3;

/** CRC16-XModem (polynomial 0x1021, initial 0), the checksum of a Stellar strkey. */
export function crc16Xmodem(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/**
 * A 32-byte Stellar strkey of one kind: `letter` then 55 characters of RFC
 * 4648 base32 (56 in all), decoding to the version byte, the 32 bytes and
 * their CRC16-XModem, little-endian. The all-zero body is refused.
 */
function checkStellarStrkey(text: string, letter: "G" | "C", version: number, what: string): AddressCheck {
  const shape = `must be ${what}: ${letter} followed by 55 base32 characters (A-Z, 2-7)`;
  if (!new RegExp(`^${letter}[A-Z2-7]{55}$`).test(text)) return refused(shape);
  let bytes: Uint8Array;
  try {
    bytes = base32nopad.decode(text);
  } catch {
    return refused(shape);
  }
  if (bytes.length !== 35 || bytes[0] !== version) return refused(`must be ${what} (version byte of a ${letter}… key)`);
  const body = bytes.subarray(0, 33);
  const crc = crc16Xmodem(body);
  if (bytes[33] !== (crc & 0xff) || bytes[34] !== crc >> 8) return refused("has a wrong strkey checksum (check the address)");
  if (body.subarray(1).every((b) => b === 0)) return refused("is the all-zero key, which nobody can spend from");
  return { ok: true, address: text };
}

/**
 * Strkeys that are not account ids but get pasted where one belongs, and what
 * to send instead: the reason names the mistake rather than the alphabet.
 */
const OTHER_STELLAR_STRKEYS: Readonly<Record<string, string>> = {
  M: "is a muxed account (M…): send the account id (G…) it is built on",
  C: "is a contract address (C…), not an account: send an account id (G…)",
  S: "is a secret seed (S…), which must never be shared: send its account id (G…) instead",
};

/**
 * A Stellar account id: the strkey `G…` (version byte, 32-byte ed25519 key,
 * CRC16-XModem). Muxed (`M…`), contract (`C…`) and other strkeys are refused,
 * saying what they are; so is the all-zero key.
 */
export function checkStellarAddress(text: string): AddressCheck {
  const other = /^[A-Z][A-Z2-7]{55,}$/.test(text) ? OTHER_STELLAR_STRKEYS[text[0]!] : undefined;
  if (other) return refused(other);
  return checkStellarStrkey(text, "G", STELLAR_ACCOUNT_VERSION, "a Stellar account id");
}

/** The 32-byte ed25519 public key of a Stellar account id (G…); throws for text checkStellarAddress refuses. */
export function stellarPublicKey(accountId: string): Uint8Array {
  const checked = checkStellarAddress(accountId);
  if (!checked.ok) throw new Error(`not a Stellar account id: ${checked.reason}`);
  return base32nopad.decode(accountId).subarray(1, 33);
}

/**
 * A Soroban contract id: the strkey `C…` (version byte, 32-byte contract
 * hash, CRC16-XModem), as a SEP-41 token's address (x402's `asset` on
 * Stellar) or a contract wallet is written.
 */
export function checkStellarContractId(text: string): AddressCheck {
  return checkStellarStrkey(text, "C", STELLAR_CONTRACT_VERSION, "a Soroban contract id");
}

const CHECKS: Record<PayoutChain, (text: string) => AddressCheck> = {
  base: checkEvmAddress,
  solana: checkSolanaAddress,
  stellar: checkStellarAddress,
};

/** Checks a payout address for its chain; answers it normalised (EVM: checksummed) or why it is refused. */
export function checkPayoutAddress(chain: PayoutChain, text: string): AddressCheck {
  return CHECKS[chain](text);
}

/** What a change did to one chain's standing payout address (null: none), as answers and account events name it. */
export type PayoutChange = "added" | "replaced" | "removed" | "unchanged" | "none";

export function payoutChange(before: string | null, after: string | null): PayoutChange {
  if (before === after) return after === null ? "none" : "unchanged";
  if (before === null) return "added";
  return after === null ? "removed" : "replaced";
}
