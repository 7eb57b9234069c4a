import { authorizationFromMessage, escrowStatusUrl, fulfillmentV1, requirementFromMessage, type paymentsV1 } from "@c402/contracts";
import { isId } from "@c402/ids";
import { answered } from "@c402/rpc";
import { preparedEscrowDeposit, preparedPayment } from "@c402/x402";
import type { Goods } from "../faces/answers";
import { receiptUrl, receiptView } from "./receipts";
import { preparedScheduleView } from "./schedules";

/** The answers of a face to a payment, and of its prepare and handoff paths. */

/** The goods of a sale delivered with its payment: inline (or, for a webhook checkout, word that the seller fulfils it). */
export function goodsView(goods: Goods) {
  return goods.mode === "webhook"
    ? {
        mode: "webhook",
        payload: null,
        status: "awaiting_fulfilment",
        note: "The seller was told of this sale and fulfils it; the receipt is your proof of purchase.",
      }
    : { mode: "inline", payload: goods.payloadJson === undefined ? null : (JSON.parse(goods.payloadJson) as unknown) };
}

/** A settled payment (200): the goods (goodsView), with the receipt. */
export function paidView(goods: Goods, receipt: paymentsV1.Receipt, redelivered: boolean, baseUrl: string) {
  const view = receiptView(receipt, baseUrl);
  return {
    fulfillment: goodsView(goods),
    receipt: view,
    receipt_url: view.receipt_url,
    redelivered,
    test_mode: view.test_mode,
  };
}

/**
 * A relay sale (paid only on delivery): the origin's answer, charged, with
 * the receipt. The goods (2xx) answer 200; the buyer's own request error
 * (400, 404, 422) answers with the origin's status, `fault: buyer` and where
 * to report. `payload` is the origin's body: parsed JSON, text, or base64
 * (with `encoding`) for anything else.
 */
export function relayPaidView(mode: "relay" | "mcp", delivery: fulfillmentV1.Delivery, receipt: paymentsV1.Receipt, redelivered: boolean, baseUrl: string) {
  const view = receiptView(receipt, baseUrl);
  const buyerError = delivery.outcome === fulfillmentV1.DeliveryOutcome.BUYER_ERROR;
  return {
    status: buyerError ? delivery.status : 200,
    body: {
      fulfillment: relayFulfillmentView(mode, delivery),
      receipt: view,
      receipt_url: view.receipt_url,
      redelivered,
      test_mode: view.test_mode,
      ...(buyerError ? buyerErrorHelp(baseUrl, receipt.checkoutId, receipt.id) : {}),
    },
  };
}

/** What an origin answered, as the buyer gets it (a relay sale's and a package call's fulfillment block). */
export function relayFulfillmentView(mode: "relay" | "mcp", delivery: fulfillmentV1.Delivery) {
  return { mode, origin_status: delivery.status, content_type: delivery.contentType ?? null, ...originBodyOf(delivery) };
}

/** A buyer's own request error (origin 400, 404, 422): charged, the answer is the product; where to report it. */
export function buyerErrorHelp(baseUrl: string, checkoutId: string, receiptId: string) {
  return {
    fault: "buyer",
    help: {
      fix: "The seller's origin refused the request as sent (you were charged: the answer is the product). Check the call parameters against the offer's input_schema.",
      retry_is_safe: false,
      report: reportHelp(baseUrl, checkoutId, receiptId),
    },
  };
}

const TEXT_TYPES = /^(text\/|application\/(xml|javascript|x-www-form-urlencoded)|[^;]*\+xml)/i;
const JSON_TYPES = /^application\/([a-z0-9.+-]*\+)?json\b/i;

function originBodyOf(d: fulfillmentV1.Delivery): { payload: unknown; encoding?: "base64" } {
  const body = Buffer.from(d.body);
  const type = d.contentType ?? "";
  if (body.length === 0) return { payload: null };
  if (JSON_TYPES.test(type)) {
    try {
      return { payload: JSON.parse(body.toString("utf8")) as unknown };
    } catch {
      // A body that says JSON and is not: given as the text it is.
    }
  }
  const text = body.toString("utf8");
  if (JSON_TYPES.test(type) || TEXT_TYPES.test(type) || (type === "" && !text.includes("\uFFFD"))) return { payload: text };
  return { payload: body.toString("base64"), encoding: "base64" };
}

/** Where a buyer reports a problem with a checkout (public; naming the receipt attaches the payment). */
export function reportHelp(baseUrl: string, checkoutId: string, receiptId?: string) {
  return {
    url: `${baseUrl}/v1/checkouts/${checkoutId}/reports`,
    method: "POST",
    body: { category: "not_delivered", ...(receiptId ? { receipt_id: receiptId } : {}) },
  };
}

/**
 * A payment broadcast but not yet confirmed (202): never a fresh 402 that
 * would invite a second payment. An escrow deposit's is followed at its
 * status URL (it has no receipt until released).
 */
export function pendingPaymentView(r: paymentsV1.SubmitPaymentResponse, baseUrl: string, checkoutId: string) {
  const url = receiptUrl(baseUrl, r.paymentId);
  const escrow = isId("escrowCheckout", checkoutId);
  const poll = escrow ? escrowStatusUrl(baseUrl, checkoutId, r.paymentId) : url;
  return {
    status: "pending",
    payment_id: r.paymentId,
    tx_hash: r.txHash || null,
    receipt_url: url,
    poll,
    message: escrow
      ? "The deposit was submitted on-chain and is not confirmed yet. Do not pay again: poll the escrow's status at poll (or present the same payment again) for the goods."
      : "The payment was submitted on-chain and is not confirmed yet. Do not pay again: poll receipt_url (or present the same payment again) for the goods and the receipt.",
  };
}

/**
 * What a buyer signs for a face, and the payload to put it in: EIP-712 typed
 * data on EVM; on Solana the transaction the service prepared (ADR 16), which
 * the buyer's wallet signs as any Solana transaction.
 */
export function preparedView(r: paymentsV1.PreparePaymentResponse, resourceUrl: string) {
  const requirement = requirementFromMessage(answered(r.requirement, "requirement"));
  if (r.transaction !== undefined) {
    return {
      network: r.network,
      typed_data: null,
      transaction: r.transaction,
      payload_stub: { x402Version: 2 as const, resource: { url: resourceUrl }, accepted: requirement, payload: { transaction: "" } },
      how: "Sign transaction with the payer's Solana wallet (it is the fee payer's to co-sign: sign only your own slot, as signTransaction does), put the signed transaction (base64) in payload_stub.payload.transaction, base64 the JSON and send it as PAYMENT-SIGNATURE (or X-PAYMENT) on GET of pay_url, within about a minute (its blockhash expires).",
    };
  }
  const authorization = authorizationFromMessage(answered(r.authorization, "authorization"));
  if (r.escrowSalt !== undefined) {
    const { typedData, payloadStub } = preparedEscrowDeposit(requirement, authorization, resourceUrl, r.escrowSalt);
    return {
      network: r.network,
      typed_data: typedData,
      payload_stub: payloadStub,
      salt: r.escrowSalt,
      how: "Sign typed_data (a ReceiveWithAuthorization to the escrow contract; its nonce is the escrow id of this deposit's terms) with eth_signTypedData_v4, put the signature in payload_stub.payload.signature, keep payload_stub.payload.salt as given, base64 the JSON and send it as PAYMENT-SIGNATURE (or X-PAYMENT) on GET of pay_url.",
    };
  }
  const { typedData, payloadStub } = preparedPayment(requirement, authorization, resourceUrl);
  if (r.schedule.length > 0) {
    return {
      network: r.network,
      typed_data: typedData,
      payload_stub: payloadStub,
      schedule: preparedScheduleView(r.schedule, requirement, resourceUrl),
      how: "A recurring series: sign typed_data (period 0, paid now) and each schedule[] entry's typed_data (a later period, charged inside its window) with eth_signTypedData_v4, put each signature in its payload_stub.payload.signature, then POST pay_url's /pay with PAYMENT-SIGNATURE (period 0's payload, base64 JSON) and the body {schedule: [each held period's payload, in order]}.",
    };
  }
  return {
    network: r.network,
    typed_data: typedData,
    payload_stub: payloadStub,
    how: "Sign typed_data with eth_signTypedData_v4, put the signature in payload_stub.payload.signature, base64 the JSON and send it as PAYMENT-SIGNATURE (or X-PAYMENT) on GET of pay_url (the face URL with your call parameters).",
  };
}

/** The payment that carried a handoff nonce. */
export function handoffView(r: paymentsV1.FindHandoffResponse, baseUrl: string) {
  return { payment_id: r.paymentId, receipt_url: receiptUrl(baseUrl, r.paymentId), escrow_state: r.escrowHeld ? "held" : null, test_mode: r.testMode };
}

/**
 * An escrow sale whose deposit is held (200): the goods as any sale's (the
 * `fulfillment` block of paidView or relayPaidView), and instead of a receipt
 * the escrow's payment id and where to follow it: the receipt appears when
 * the escrow releases the payment to the seller (ADR 19).
 */
export function heldView(fulfillment: unknown, r: paymentsV1.SubmitPaymentResponse, checkoutId: string, testMode: boolean, baseUrl: string) {
  return {
    fulfillment,
    receipt: null,
    escrow: {
      payment_id: r.paymentId,
      status: "held",
      status_url: escrowStatusUrl(baseUrl, checkoutId, r.paymentId),
      note: "The payment is held in escrow: the receipt appears when it is released to the seller.",
    },
    redelivered: r.redelivered,
    test_mode: testMode,
  };
}
