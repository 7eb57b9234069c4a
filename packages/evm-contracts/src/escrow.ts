/**
 * What a service needs to speak to the C402Escrow contract (contracts/C402Escrow.sol, ADR 18):
 * the EIP-712 domain and types of its terms and actions, the escrow id of a set of terms, the
 * typed data a buyer signs to deposit and to act, the numeric ids of actions, states and
 * timed exits, and the rules a deposit's terms must meet (the contract's own checks, in the same
 * order and words, so terms can be refused before a buyer is asked to sign them).
 */
import { getAddress, hashStruct, hashTypedData, type Address, type Hex } from "viem";
import { RECEIVE_WITH_AUTHORIZATION_TYPES } from "@c402/x402";

export const ESCROW_EIP712_NAME = "c402 Escrow";
export const ESCROW_EIP712_VERSION = "1";

/** The EIP-712 domain of an escrow contract: its terms, ids and action signatures are bound to this chain and this contract. */
export function escrowDomain(chainId: number, escrow: Address) {
  return { name: ESCROW_EIP712_NAME, version: ESCROW_EIP712_VERSION, chainId, verifyingContract: getAddress(escrow) } as const;
}

export const ESCROW_TERMS_TYPES = {
  EscrowTerms: [
    { name: "buyer", type: "address" },
    { name: "seller", type: "address" },
    { name: "platform", type: "address" },
    { name: "feeTo", type: "address" },
    { name: "arbiter", type: "address" },
    { name: "amount", type: "uint256" },
    { name: "platformAmount", type: "uint256" },
    { name: "fee", type: "uint256" },
    { name: "settleWindow", type: "uint64" },
    { name: "holdWindow", type: "uint64" },
    { name: "backstopWindow", type: "uint64" },
    { name: "preset", type: "uint8" },
    { name: "salt", type: "bytes32" },
  ],
} as const;

export const ESCROW_ACTION_TYPES = {
  EscrowAction: [
    { name: "escrowId", type: "bytes32" },
    { name: "action", type: "uint8" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
} as const;

/** The terms of one escrow, as the contract's `EscrowTerms` (amounts in USDC atomic units, windows in seconds). */
export interface EscrowTerms {
  buyer: Address;
  seller: Address;
  /** The zero address when there is no platform cut. */
  platform: Address;
  feeTo: Address;
  arbiter: Address;
  /** The seller's share. */
  amount: bigint;
  platformAmount: bigint;
  fee: bigint;
  settleWindow: bigint;
  holdWindow: bigint;
  backstopWindow: bigint;
  /** ESCROW_PRESET: a label only, the windows are what the contract enforces. */
  preset: number;
  /** Makes terms otherwise equal (the same buyer paying the same seller twice) a new escrow. */
  salt: Hex;
}

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000" as const;

/** The contract's `preset` ids. */
export const ESCROW_PRESET = { instant: 0, standard: 1, shipping: 2, custom: 3 } as const;
export type EscrowPreset = keyof typeof ESCROW_PRESET;

/** Action ids of `EscrowAction` and `submitAction`, keyed by the spec's action names (`/e/{id}/actions/{action}`). */
export const ESCROW_ACTION = { hold: 1, approve: 2, "request-refund": 3, cancel: 4 } as const;
export type EscrowActionName = keyof typeof ESCROW_ACTION;

/** Whose signature (or wallet) an action needs: the seller's for cancel, the buyer's for the others. */
export const ESCROW_ACTION_SIGNER: Record<EscrowActionName, "buyer" | "seller"> = {
  hold: "buyer",
  approve: "buyer",
  "request-refund": "buyer",
  cancel: "seller",
};

/** The contract's `State` ids, keyed by the spec's escrow status names (`none`: no such escrow). */
export const ESCROW_STATE = { none: 0, held: 1, on_hold: 2, escalated: 3, released: 4, refunded: 5 } as const;
export type EscrowStateName = keyof typeof ESCROW_STATE;

/** The spec's status name of a contract `State` id. */
export function escrowStateName(state: number): EscrowStateName {
  const name = (Object.keys(ESCROW_STATE) as EscrowStateName[]).find((k) => ESCROW_STATE[k] === state);
  if (name === undefined) throw new Error(`unknown escrow state ${state}`);
  return name;
}

/** The contract's `TimedExit` ids (the first result of `timedExit(id)`): which of `release(id)` and `refund(id)` the state's clock leads to. */
export const ESCROW_TIMED_EXIT = { none: 0, release: 1, refund: 2 } as const;

/** The contract's `Cause` ids, carried by its `Released` and `Refunded` events. */
export const ESCROW_CAUSE = { approved: 0, settle_window_ended: 1, ruling: 2, cancelled: 3, backstop: 4 } as const;

/**
 * The gas an arbiter's ruling is budgeted (what readiness counts an arbiter's balance in): the costliest ruling
 * pays the seller, a platform cut and the fee, each possibly to an address holding no USDC yet, for less than
 * this (packages/devchain/test/escrow.test.ts measures it and keeps the budget within three times the cost);
 * the rest is room for gas schedule changes.
 */
export const ESCROW_RULING_GAS_BUDGET = 200_000n;

/** The spec's escrow window limits, as the contract enforces them (seconds). */
export const ESCROW_LIMITS = {
  minWindow: 3_600n,
  maxSettleWindow: 30n * 86_400n,
  maxHoldWindow: 30n * 86_400n,
  maxBackstopWindow: 180n * 86_400n,
  maxPreset: 3,
} as const;

/**
 * Why the contract would refuse these terms at deposit (its `InvalidTerms(reason)`, same checks in
 * the same order, same words), or undefined when it accepts them.
 */
export function escrowTermsProblem(t: EscrowTerms): string | undefined {
  const same = (a: Address, b: Address) => a.toLowerCase() === b.toLowerCase();
  const zero = (a: Address) => same(a, ZERO_ADDRESS);
  const L = ESCROW_LIMITS;
  if (t.amount === 0n) return "amount is zero";
  if (zero(t.buyer)) return "buyer is zero";
  if (zero(t.seller)) return "seller is zero";
  if (same(t.seller, t.buyer)) return "seller is the buyer";
  if (zero(t.arbiter)) return "arbiter is zero";
  if (same(t.arbiter, t.buyer)) return "arbiter is the buyer";
  if (same(t.arbiter, t.seller)) return "arbiter is the seller";
  if (t.platformAmount !== 0n && zero(t.platform)) return "platform is zero";
  if (t.fee !== 0n && zero(t.feeTo)) return "fee wallet is zero";
  if (t.preset > L.maxPreset) return "unknown preset";
  if (t.settleWindow < L.minWindow || t.settleWindow > L.maxSettleWindow) return "settle window out of bounds";
  if (t.holdWindow < L.minWindow || t.holdWindow > L.maxHoldWindow) return "hold window out of bounds";
  if (t.backstopWindow < L.minWindow || t.backstopWindow > L.maxBackstopWindow) return "backstop window out of bounds";
  if (t.backstopWindow <= t.holdWindow) return "backstop window not above hold window";
  return undefined;
}

/** What the buyer deposits: the seller's amount, the platform's cut and the fee. */
export function escrowTotal(t: Pick<EscrowTerms, "amount" | "platformAmount" | "fee">): bigint {
  return t.amount + t.platformAmount + t.fee;
}

/** The EIP-712 struct hash of the terms (the contract's `hashTerms`). */
export function hashEscrowTerms(terms: EscrowTerms): Hex {
  return hashStruct({ data: terms, types: ESCROW_TERMS_TYPES, primaryType: "EscrowTerms" });
}

/** The escrow id of the terms on one contract (its `escrowId`): their EIP-712 digest, the nonce of the deposit's authorization. */
export function escrowId(terms: EscrowTerms, chainId: number, escrow: Address): Hex {
  return hashTypedData({ domain: escrowDomain(chainId, escrow), types: ESCROW_TERMS_TYPES, primaryType: "EscrowTerms", message: terms });
}

/** The token whose EIP-3009 authorization funds a deposit: its address and EIP-712 name and version ("USDC"/"2" on Base Sepolia, "USD Coin"/"2" on Base). */
export interface EscrowToken {
  address: Address;
  name: string;
  version: string;
}

/**
 * The typed data a buyer signs to fund an escrow: USDC's `ReceiveWithAuthorization` of the terms'
 * total from the buyer to the escrow contract, with the escrow id as its nonce. Submitted with the
 * terms to the contract's `deposit` (v, r, s) or `depositWithSignature` (bytes).
 */
export function escrowDepositTypedData(opts: {
  chainId: number;
  escrow: Address;
  token: EscrowToken;
  terms: EscrowTerms;
  validAfter: bigint;
  validBefore: bigint;
}) {
  return {
    domain: { name: opts.token.name, version: opts.token.version, chainId: opts.chainId, verifyingContract: getAddress(opts.token.address) },
    types: RECEIVE_WITH_AUTHORIZATION_TYPES,
    primaryType: "ReceiveWithAuthorization" as const,
    message: {
      from: getAddress(opts.terms.buyer),
      to: getAddress(opts.escrow),
      value: escrowTotal(opts.terms),
      validAfter: opts.validAfter,
      validBefore: opts.validBefore,
      nonce: escrowId(opts.terms, opts.chainId, opts.escrow),
    },
  };
}

/**
 * The typed data the acting wallet signs for a relayed action (`submitAction(escrowId, action,
 * deadline, v, r, s)`): `nonce` is the escrow's current `nonces(escrowId)`, which every action
 * increments, so the signature is good for one action taken from the state it was asked in.
 */
export function escrowActionTypedData(opts: { chainId: number; escrow: Address; escrowId: Hex; action: EscrowActionName; nonce: bigint; deadline: bigint }) {
  return {
    domain: escrowDomain(opts.chainId, opts.escrow),
    types: ESCROW_ACTION_TYPES,
    primaryType: "EscrowAction" as const,
    message: { escrowId: opts.escrowId, action: ESCROW_ACTION[opts.action], nonce: opts.nonce, deadline: opts.deadline },
  };
}
