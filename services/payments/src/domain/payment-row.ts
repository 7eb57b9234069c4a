import { newId } from "@c402/ids";
import type { Breakdown } from "@c402/money";
import type { PaymentPayload, PaymentRequirements } from "@c402/x402";
import { getAddress } from "viem";
import type { AuthorizationKey, PaymentRow } from "../store/payments-store";
import { priceOf, type CheckoutForPayment, type SplitParties } from "./requirements";
import { paymentRejected } from "./verify-payment";
import type { SeriesRecord } from "./series";
import { subjectFor } from "./subject";

/**
 * What identifies a payment: its authorization (payer, nonce) on one token,
 * rehearsal or live. Every lookup and every new row takes it from here.
 */
export function authorizationKey(testMode: boolean, requirement: PaymentRequirements, payload: PaymentPayload): AuthorizationKey {
  const a = payload.payload.authorization;
  return { test_mode: testMode, network: requirement.network, asset: requirement.asset, payer: getAddress(a.from), nonce: a.nonce.toLowerCase() };
}

/**
 * A presented payment as its rail reads it, before anything is recorded: what
 * identifies it, what the buyer signed, and who it pays how much, with
 * addresses written as its chain family writes them.
 */
export interface PresentedPayment {
  key: AuthorizationKey;
  /** What the buyer signed, as the row keeps it (EVM: the authorization and its signature; Solana: the transaction). */
  authorization: Record<string, string>;
  /**
   * The last second it can settle (EVM validBefore; a Solana relay sale: when its blockhash may expire, a Stellar
   * one: when its authorization's last ledger may close, read from the chain); null when the chain alone decides (an
   * inline Solana or Stellar sale).
   */
  validBefore: bigint | null;
  payTo: string;
  platformFeeTo: string | null;
  /** What moves, split (the receipt's provider, platform and fee amounts and total). */
  amounts: Breakdown;
}

/** An EIP-3009 payment as presented: keyed by (payer, nonce), paying the checkout's split of its total. */
export function evmPresentedPayment(
  testMode: boolean,
  checkout: CheckoutForPayment,
  requirement: PaymentRequirements,
  payload: PaymentPayload,
): PresentedPayment {
  const a = payload.payload.authorization;
  return {
    key: authorizationKey(testMode, requirement, payload),
    authorization: { ...a, signature: payload.payload.signature },
    validBefore: BigInt(a.validBefore),
    payTo: getAddress(checkout.payTo),
    platformFeeTo: checkout.platform ? getAddress(checkout.platform.feeTo) : null,
    amounts: priceOf(checkout),
  };
}

/**
 * A new payment row for a presented payment against a checkout: the amounts
 * its rail moves, the buyer pseudonym, the seller as `pay_to`. The caller sets
 * the saga fields (status, ledger, transaction).
 */
export function newPaymentRow(opts: {
  checkout: CheckoutForPayment;
  presented: PresentedPayment;
  subjectSecret: string;
  now: Date;
  /** The handoff nonce the paid request carried, if any. */
  handoffId: string | null;
  /** A relay or mcp sale: when the buyer's request stops waiting (ADR 9). */
  answerBy?: Date | null;
  /** A series purchase (period 0): its new schedule id and the series it holds (ADR 20). */
  series?: { scheduleId: string; record: SeriesRecord };
  saga: Pick<PaymentRow, "status" | "test_mode" | "tx_hash" | "settled_at" | "split_address" | "single_shot">;
}): PaymentRow {
  const { checkout, presented } = opts;
  const { key, amounts } = presented;
  return {
    id: newId("payment"),
    checkout_id: checkout.id,
    account_id: checkout.accountId,
    checkout_title: checkout.title,
    ...key,
    authorization: presented.authorization,
    price_atomic: amounts.price,
    provider_amount: amounts.providerAmount,
    platform_amount: amounts.platformAmount,
    platform_fee_bps: presented.platformFeeTo === null ? 0 : (checkout.platform?.feeBps ?? 0),
    platform_fee_to: presented.platformFeeTo,
    fee_amount: amounts.feeAmount,
    total: amounts.total,
    pay_to: presented.payTo,
    subject: subjectFor(opts.subjectSecret, checkout.accountId, key.payer),
    // Inline goods are delivered with the settlement; a relay sale's outcome is recorded when its origin answered.
    delivery_outcome: checkout.relay ? "pending" : checkout.webhook ? "awaiting_fulfilment" : "delivered",
    fulfillment: checkout.relay ? (checkout.relay.mcp ? "mcp" : "relay") : checkout.webhook ? "webhook" : "inline",
    delivery_status: null,
    delivery_latency_ms: null,
    delivery_bytes: null,
    fulfilled_at: null,
    handoff_id: opts.handoffId,
    sold_by: checkout.soldBy ?? null,
    parties: partiesOf(checkout),
    raw_tx: null,
    failure_reason: null,
    valid_before: presented.validBefore,
    updated_at: opts.now,
    answer_by: opts.answerBy ?? null,
    schedule_id: opts.series?.scheduleId ?? null,
    schedule_period: opts.series ? 0 : null,
    series: opts.series ? (opts.series.record as unknown as Record<string, unknown>) : null,
    ...opts.saga,
  };
}

/** Who a recorded payment pays, as it was sold: a resumed settlement rebuilds the same split from it. */
export function splitPartiesOfRow(row: PaymentRow): SplitParties {
  return { payTo: row.pay_to, platformFeeBps: row.platform_fee_bps, platformFeeTo: row.platform_fee_to };
}

/** The parties the checkout declared, as catalog holds them (verbatim JSON), or null. */
function partiesOf(checkout: CheckoutForPayment): Record<string, unknown> | null {
  const json = checkout.listing?.settings?.partiesJson;
  return json === undefined ? null : (JSON.parse(json) as Record<string, unknown>);
}

/**
 * A payment whose authorization (payer, nonce) is already recorded may only
 * redeliver when it is the very payment recorded, for the same checkout: a
 * copy with any field changed carries a signature that no longer covers it,
 * and another signature for a used nonce cannot be paid again.
 */
export function assertRedeliverable(row: PaymentRow, checkoutId: string, payload: PaymentPayload): void {
  const sameSignature = String(row.authorization.signature).toLowerCase() === String(payload.payload.signature).toLowerCase();
  if (sameSignature && !sameAuthorization(row, payload)) {
    throw paymentRejected("invalid_exact_evm_signature", "The signature does not cover this authorization: one of its fields was changed.");
  }
  if (row.checkout_id !== checkoutId || !sameSignature) {
    throw paymentRejected("invalid_exact_evm_nonce_already_used", "This authorization has already paid for something else.");
  }
}

function sameAuthorization(row: PaymentRow, payload: PaymentPayload): boolean {
  const recorded = row.authorization;
  const presented = payload.payload.authorization;
  const sameNumber = (a: unknown, b: unknown) => {
    try {
      return BigInt(String(a)) === BigInt(String(b));
    } catch {
      return false;
    }
  };
  return (
    getAddress(String(recorded.from)) === getAddress(presented.from) &&
    getAddress(String(recorded.to)) === getAddress(presented.to) &&
    sameNumber(recorded.value, presented.value) &&
    sameNumber(recorded.validAfter, presented.validAfter) &&
    sameNumber(recorded.validBefore, presented.validBefore) &&
    String(recorded.nonce).toLowerCase() === presented.nonce.toLowerCase()
  );
}
