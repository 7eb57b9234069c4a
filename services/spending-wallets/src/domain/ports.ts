/**
 * The seams between the wallet book (keys, limits, budget, event log: backed by
 * PostgreSQL) and the pay engine (the x402 client that fetches, signs and
 * retries). The engine asks for these; the book implements them. Amounts are
 * USDC atomic units (6 decimals on Base and Solana) as bigint.
 */

export type WalletChain = "base" | "solana";

/** The wallet a payment is made from (never its key). */
export interface PayingWallet {
  id: string;
  accountId: string;
  chain: WalletChain;
  /** CAIP-2 network the wallet lives on. */
  network: string;
  address: string;
}

/** A budget reservation made before anything is signed. */
export interface Reservation {
  spendId: string;
  amount: bigint;
}

/** Why the budget refused: the reason a `refused` event records. */
export type BudgetRefusal = "over_max_usd" | "over_per_payment_limit" | "over_daily_limit";

/**
 * The account's budget on one chain. `reserve` is one PostgreSQL transaction
 * (the wallet's row locked): it checks the amount against the ceiling (the
 * smallest of max, the per-payment limit and what is left of the UTC day,
 * counting confirmed spends and every reservation not released) and inserts the
 * reservation, so concurrent calls on any number of replicas never together
 * exceed it. A reservation is confirmed when the seller's answer proves the
 * payment, released when it certainly did not happen, and otherwise left
 * reserved (outcome unknown): it keeps counting against the day.
 */
export interface SpendBudget {
  reserve(
    wallet: PayingWallet,
    r: { amount: bigint; maxAtomic?: bigint; url: string; network: string; payTo: string; actor: string; idempotencyKey?: string },
  ): Promise<{ reserved: Reservation } | { refused: BudgetRefusal; ceiling: bigint }>;
  confirm(spendId: string, outcome: { transaction: string; receiptUrl?: string }): Promise<void>;
  release(spendId: string, reason: string): Promise<void>;
  /** Marks the outcome unknown (the signed payment left; no answer proves or disproves it): it stays reserved. */
  leaveReserved(spendId: string, reason: string): Promise<void>;
}

/**
 * The wallet's key, opened only for the duration of `use` (the plaintext is
 * never stored, logged or returned by the engine; the buffer is wiped after).
 * Base: the 32-byte secp256k1 key; Solana: the 64-byte ed25519 secret key.
 */
export interface KeyVault {
  withKey<T>(wallet: PayingWallet, use: (secretKey: Uint8Array) => Promise<T>): Promise<T>;
}

/** Reads the wallet's USDC on its chain (atomic units). */
export interface BalanceReader {
  usdcOf(wallet: PayingWallet): Promise<bigint>;
}

/** The wallet's event log: `refused` with its reason (every refusal of a pay), `spent` with the outcome. */
export interface WalletEvents {
  refused(wallet: PayingWallet, e: { actor: string; reason: string; url?: string; amount?: bigint }): Promise<void>;
}
