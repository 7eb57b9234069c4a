import { newId } from "@c402/ids";
import type { PaymentPayload, PaymentRequirements } from "@c402/x402";
import { getAddress } from "viem";
import type { PaymentRow } from "../store/payments-store";
import { priceOf, type CheckoutForPayment } from "./requirements";
import { subjectFor } from "./subject";

/**
 * A new payment row for an authorization against a checkout: the amounts from
 * the fee rule, the buyer pseudonym, the seller as `pay_to`. The caller sets
 * the saga fields (status, ledger, transaction).
 */
export function newPaymentRow(opts: {
  checkout: CheckoutForPayment;
  requirement: PaymentRequirements;
  payload: PaymentPayload;
  subjectSecret: string;
  now: Date;
  /** The handoff nonce the paid request carried, if any. */
  handoffId: string | null;
  saga: Pick<PaymentRow, "status" | "test_mode" | "tx_hash" | "settled_at" | "split_address" | "single_shot">;
}): PaymentRow {
  const { checkout, requirement, payload } = opts;
  const a = payload.payload.authorization;
  const payer = getAddress(a.from);
  const price = priceOf(checkout);
  return {
    id: newId("payment"),
    checkout_id: checkout.id,
    account_id: checkout.accountId,
    checkout_title: checkout.title,
    network: requirement.network,
    asset: requirement.asset,
    payer,
    nonce: a.nonce.toLowerCase(),
    authorization: { ...a, signature: payload.payload.signature },
    price_atomic: price.price,
    provider_amount: price.providerAmount,
    platform_amount: price.platformAmount,
    fee_amount: price.feeAmount,
    total: price.total,
    pay_to: getAddress(checkout.payTo),
    subject: subjectFor(opts.subjectSecret, checkout.accountId, payer),
    delivery_outcome: "delivered",
    handoff_id: opts.handoffId,
    sold_by: null,
    raw_tx: null,
    failure_reason: null,
    valid_before: BigInt(a.validBefore),
    updated_at: opts.now,
    ...opts.saga,
  };
}
