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
 * The first attempt under the same idempotency key: `reserve` answers its
 * reservation again (never a second one) with this, so the engine answers that
 * outcome instead of paying: confirmed (its transaction), released (why), or
 * reserved / unknown (still in flight, or its outcome was never proved).
 */
export interface PreviousSpend {
  status: "reserved" | "confirmed" | "released" | "unknown";
  url: string;
  network: string;
  payTo: string;
  transaction?: string;
  receiptUrl?: string;
  reason?: string;
  reservedAt: Date;
}

/** What `reserve` answers: a reservation (`previous` set when it is the first attempt's, found by its idempotency key), or a refusal with the ceiling. */
export type SpendReservation = { reserved: Reservation; previous?: PreviousSpend } | { refused: BudgetRefusal; ceiling: bigint };

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
  ): Promise<SpendReservation>;
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

/** What an agent asked to pay (the caller's rules were checked before). */
export interface PayRequest {
  url: string;
  /** Added to the URL's query string. */
  params: Record<string, string>;
  /** The agent's max_usd in atomic units: only lowers the ceiling. */
  maxAtomic?: bigint;
  actor: string;
  /** The same key again answers the first attempt's outcome (SpendBudget.reserve finds it), never a second payment. */
  idempotencyKey?: string;
}

/** The seller's settlement of a payment (its PAYMENT-RESPONSE), with the spend it confirmed. */
export interface PaidReceipt {
  spendId: string;
  network: string;
  transaction: string;
  payer: string;
  payTo: string;
  amount: bigint;
  receiptUrl?: string;
  paidAt: Date;
}

/** The seller's answer, as received (bounded in size). */
export interface Goods {
  status: number;
  contentType: string;
  body: Uint8Array;
}

export interface PayOutcome {
  /** false: the URL answered without asking for payment (goods are that answer). */
  paid: boolean;
  url: string;
  receipt?: PaidReceipt;
  goods: Goods;
}

/**
 * Pays one x402 URL from a wallet: fetch (through the outbound guard), choose
 * the requirement of the wallet's network, reserve the budget, read the
 * balance, sign with the key opened for that instant, retry with the payment,
 * then confirm, release or leave reserved. A refusal is recorded (WalletEvents)
 * and thrown as a ProblemError with the spec's status.
 */
export interface PayEngine {
  pay(wallet: PayingWallet, request: PayRequest): Promise<PayOutcome>;
}
