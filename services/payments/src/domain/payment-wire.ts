import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { deliveryOutcomeName, deliveryOutcomeToProto, paymentEventsV1, type fulfillmentV1, type paymentsV1 } from "@c402/contracts";
import { formatUsd } from "@c402/money";
import type { SettleResponse } from "@c402/x402";
import type { PaymentRow } from "../store/payments-store";
import { seriesOf, seriesStartedMessage, type SeriesRecord } from "./series";
import type { DeliveryRecord } from "./settlement/paid-on-delivery";
import type { SettlementOutcome } from "./settlement/settlement";

/**
 * A payment on the wire, one mapping per shape: the receipt the payments RPC
 * answers, the `payment.settled` event payload, and the x402 SettleResponse
 * (PAYMENT-RESPONSE, the facilitator's settle answer, a failed settlement's
 * fields). The receipt and the event share every field of the sale.
 */

/** The asset as receipts and events name it to people (the token address is the receipt's `asset`). */
export const ASSET_LABEL = "USDC";

/** The sale as the receipt and the event both carry it. */
function saleFields(p: PaymentRow) {
  return {
    checkoutId: p.checkout_id,
    network: p.network,
    amountUsd: formatUsd(p.price_atomic),
    providerAmount: p.provider_amount,
    ...(p.platform_amount !== null ? { platformAmount: p.platform_amount } : {}),
    ...(p.platform_fee_to !== null ? { platformFeeTo: p.platform_fee_to } : {}),
    feeAmount: p.fee_amount,
    total: p.total,
    payer: p.payer,
    subject: p.subject,
    payTo: p.pay_to,
    txHash: p.tx_hash ?? "",
    testMode: p.test_mode,
    ...(p.sold_by !== null ? { soldBy: p.sold_by } : {}),
    ...(p.parties !== null ? { partiesJson: JSON.stringify(p.parties) } : {}),
    ...(p.handoff_id !== null ? { handoffId: p.handoff_id } : {}),
    ...(p.schedule_id !== null ? { scheduleId: p.schedule_id, schedulePeriod: p.schedule_period ?? 0 } : {}),
  };
}

export function receiptMessage(p: PaymentRow): paymentsV1.Receipt {
  return {
    $typeName: "payments.v1.Receipt",
    ...saleFields(p),
    id: p.id,
    accountId: p.account_id,
    asset: p.asset,
    checkoutTitle: p.checkout_title,
    deliveryOutcome: p.delivery_outcome,
    ...(p.settled_at ? { settledAt: timestampFromDate(p.settled_at) } : {}),
    ...(p.fulfilled_at ? { fulfilledAt: timestampFromDate(p.fulfilled_at) } : {}),
    ...(p.delivery_status !== null
      ? {
          delivery: {
            $typeName: "payments.v1.DeliveryFacts" as const,
            status: p.delivery_status,
            latencyMs: p.delivery_latency_ms ?? 0,
            bytes: p.delivery_bytes ?? 0,
          },
        }
      : {}),
  };
}

/** A relay delivery on the wire, both ways (fulfillment answers it; payments hands it to the gateway). */
export function deliveryMessage(d: DeliveryRecord): fulfillmentV1.Delivery {
  return {
    $typeName: "fulfillment.v1.Delivery",
    outcome: deliveryOutcomeToProto(d.outcome),
    charged: d.charged,
    status: d.status,
    ...(d.contentType !== null ? { contentType: d.contentType } : {}),
    body: new Uint8Array(d.body),
    latencyMs: d.latencyMs,
    bytes: d.bytes,
    reason: d.reason,
    ...(d.testDeliveriesLeft !== undefined ? { testDeliveriesLeft: d.testDeliveriesLeft } : {}),
    ...(d.testDeliveriesResetSeconds !== undefined ? { testDeliveriesResetSeconds: d.testDeliveriesResetSeconds } : {}),
  };
}

export function deliveryFromMessage(m: fulfillmentV1.Delivery): DeliveryRecord {
  const outcome = deliveryOutcomeName(m.outcome);
  // An outcome this build does not know is treated as the seller's failure: never charged.
  return {
    outcome: outcome ?? "origin_failed",
    charged: outcome !== undefined && m.charged,
    status: m.status,
    contentType: m.contentType ?? null,
    body: Buffer.from(m.body),
    latencyMs: m.latencyMs,
    bytes: m.bytes,
    reason: m.reason || (outcome ? "" : "unknown_outcome"),
    ...(m.testDeliveriesLeft !== undefined ? { testDeliveriesLeft: m.testDeliveriesLeft } : {}),
    ...(m.testDeliveriesResetSeconds !== undefined ? { testDeliveriesResetSeconds: m.testDeliveriesResetSeconds } : {}),
  };
}

/**
 * The `payment.settled` payload of a settled payment. `reusableCheckout`: the
 * checkout keeps selling after this sale (consumers that close single-shot
 * checkouts skip the event).
 */
export function paymentSettledMessage(p: PaymentRow, reusableCheckout: boolean): paymentEventsV1.PaymentSettled {
  return create(paymentEventsV1.PaymentSettledSchema, {
    ...saleFields(p),
    paymentId: p.id,
    title: p.checkout_title,
    asset: ASSET_LABEL,
    reusableCheckout,
    settledAt: timestampFromDate(p.settled_at ?? new Date()),
    // Period 0 starts the series: its terms and held windows, never the signatures (ADR 20).
    ...(p.series !== null && p.schedule_period === 0 ? { series: seriesStartedMessage(p.account_id, seriesOf(p) as SeriesRecord) } : {}),
  });
}

/** The SettleResponse fields of a payment: its transaction (empty until signed), network and payer. */
export function settlementFields(p: Pick<PaymentRow, "tx_hash" | "network" | "payer">): { transaction: string; network: string; payer: string } {
  return { transaction: p.tx_hash ?? "", network: p.network, payer: p.payer };
}

/** The x402 SettleResponse of a submitted payment: success once settled, `settlement_pending` while the chain has not answered. */
export function settleResponseOf(outcome: SettlementOutcome): SettleResponse {
  if (outcome.kind === "pending") return { success: false, errorReason: "settlement_pending", ...settlementFields(outcome.row) };
  return { success: true, ...settlementFields(outcome.row) };
}
