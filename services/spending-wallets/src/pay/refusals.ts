import { formatUnits } from "viem";
import { NOT_CALLED_REASON } from "@c402/outbound-http";
import { ProblemError } from "@c402/problems";
import type { BudgetRefusal } from "../domain/ports";

/**
 * The problems a pay answers when it does not pay, one per refusal (statuses
 * are explained in README.md). Messages name amounts and reasons, never a key,
 * a signature or the signed payment.
 */

/** USDC has 6 decimals on Base and Solana. */
const usd = (atomic: bigint) => formatUnits(atomic, 6);

/** A URL that is not http(s) or that the outbound guard would never call: the agent's input is wrong. */
export function urlRefused(): ProblemError {
  return new ProblemError("invalid-request", {
    message: "The URL cannot be paid: it must be http(s) and reach a public address.",
    errors: [{ field: "url", reason: NOT_CALLED_REASON }],
    extensions: { reason: "url_refused" },
  });
}

/** The seller could not be reached before anything was signed: nothing was paid. */
export function sellerUnreachable(): ProblemError {
  return new ProblemError("upstream-failed", {
    message: "The URL could not be fetched; nothing was paid.",
    extensions: { reason: "seller_unreachable", fault: "seller" },
  });
}

/** The service was not given the wallet's network (its USDC, its RPC): an operator's omission, not the agent's. */
export function networkNotConfigured(network: string): ProblemError {
  return new ProblemError("unavailable", {
    message: `Payments on ${network} are not configured on this service.`,
    extensions: { reason: "network_not_configured" },
  });
}

/** A 402 this wallet cannot pay: no exact USDC requirement on its network, or an unreadable one. */
export function noRequirement(reason: string, chain: string): ProblemError {
  return new ProblemError("payment-required", {
    message: `The seller asks for no payment this ${chain} wallet can make (exact scheme, USDC on the wallet's network).`,
    help: { fix: "Pay from a wallet on a chain the seller accepts.", retry_is_safe: false },
    extensions: { reason },
  });
}

/** A limit the owner set refused the amount: a permission, not a failed payment (403). */
export function budgetRefused(reason: BudgetRefusal, ceiling: bigint, amount: bigint): ProblemError {
  return new ProblemError("forbidden", {
    message: `The payment of ${usd(amount)} USD is above what this wallet may spend now (${usd(ceiling)} USD).`,
    help: { fix: "Raise max_usd or the wallet's limits, or wait for the next UTC day.", retry_is_safe: false },
    extensions: { reason, ceiling_usd: usd(ceiling), amount_usd: usd(amount) },
  });
}

/** The wallet holds less than the seller asks: nothing was signed, no gas spent. */
export function insufficientBalance(balance: bigint, amount: bigint): ProblemError {
  return new ProblemError("payment-required", {
    message: `The wallet's balance is insufficient: it holds ${usd(balance)} USDC and the seller asks ${usd(amount)} USDC.`,
    help: { fix: "Fund the wallet (GET /v1/spending-wallets/{chain}/funding), then retry.", retry_is_safe: true },
    extensions: { reason: "insufficient_balance", balance_usd: usd(balance), amount_usd: usd(amount) },
  });
}

/** The seller turned the signed payment down before anything settled: nothing was paid. */
export function rejectedBySeller(sellerReason: string | undefined): ProblemError {
  return new ProblemError("payment-required", {
    message: `The seller rejected the payment${sellerReason ? ` (${sellerReason})` : ""}; nothing was paid.`,
    extensions: { reason: "rejected_by_seller", ...(sellerReason ? { seller_reason: sellerReason } : {}) },
  });
}

/** The signed payment left and no answer proves or disproves it: the spend stays reserved. */
export function outcomeUnknown(spendId: string): ProblemError {
  return new ProblemError("upstream-failed", {
    message: "The payment was sent but the seller's answer does not tell whether it settled; it keeps counting against today's limit.",
    help: {
      fix: "Do not pay again: check the wallet's events and balance; the spend is settled or freed once its outcome is known.",
      retry_is_safe: false,
    },
    extensions: { reason: "outcome_unknown", spend_id: spendId },
  });
}

/** The seller settled (the money moved) but its answer could not be read. */
export function goodsUnreadable(spendId: string): ProblemError {
  return new ProblemError("upstream-failed", {
    message: "The payment settled but the seller's answer could not be read.",
    help: { fix: "Do not pay again; ask the seller with the receipt.", retry_is_safe: false },
    extensions: { reason: "goods_unreadable", spend_id: spendId },
  });
}

/** An idempotency key whose first attempt did not pay: it is answered again, never paid with that key. */
export function previousNotPaid(spendId: string): ProblemError {
  return new ProblemError("payment-required", {
    message: "The first attempt with this idempotency key did not pay; use a new key to try again.",
    extensions: { reason: "previous_attempt_not_paid", spend_id: spendId },
  });
}
