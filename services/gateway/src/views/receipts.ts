import { receiptUrl, type paymentsV1 } from "@c402/contracts";
import { isoOrNull, jsonOrNull } from "./values";

/** The public JSON shapes of receipts. */

/** The permanent address of a payment's receipt (one definition, in @c402/contracts). */
export { receiptUrl };

export function receiptView(r: paymentsV1.Receipt, baseUrl: string) {
  const platform = r.platformAmount === undefined ? null : Number(r.platformAmount);
  return {
    id: r.id,
    object: "receipt",
    checkout_id: r.checkoutId,
    title: r.checkoutTitle,
    network: r.network,
    asset: "USDC",
    asset_address: r.asset,
    amount_usd: r.amountUsd,
    provider_amount: Number(r.providerAmount),
    platform_amount: platform,
    platform_fee_to: r.platformFeeTo ?? null,
    fee_amount: Number(r.feeAmount),
    total: Number(r.total),
    payer: r.payer,
    subject: r.subject,
    pay_to: r.payTo,
    tx_hash: r.txHash,
    test_mode: r.testMode,
    settled_at: isoOrNull(r.settledAt),
    sold_by: r.soldBy ?? null,
    parties: jsonOrNull(r.partiesJson),
    handoff_id: r.handoffId ?? null,
    split: { seller: Number(r.providerAmount), platform: platform, protocol_fee: Number(r.feeAmount), total: Number(r.total), currency: "USDC", decimals: 6 },
    // A relay delivery adds what the origin answered: its status, how long it took, how many bytes.
    delivery: {
      outcome: r.deliveryOutcome,
      // A webhook sale: when the seller closed it out (null while it awaits fulfilment).
      ...(r.deliveryOutcome === "awaiting_fulfilment" || r.deliveryOutcome === "fulfilled" ? { fulfilled_at: isoOrNull(r.fulfilledAt) } : {}),
      ...(r.delivery ? { status: r.delivery.status, latency_ms: r.delivery.latencyMs, bytes: r.delivery.bytes } : {}),
    },
    receipt_url: receiptUrl(baseUrl, r.id),
  };
}

export type ReceiptView = ReturnType<typeof receiptView>;

/** A receipt asked for before its payment settled (202). */
export function pendingReceiptView(paymentId: string, txHash: string) {
  return { id: paymentId, status: "pending", tx_hash: txHash || null, message: "Settlement is not confirmed yet; poll again." };
}
