import { authorizationFromMessage, requirementFromMessage, type paymentsV1 } from "@c402/contracts";
import { answered } from "@c402/rpc";
import { preparedPayment } from "@c402/x402";
import type { Goods } from "../faces/answers";
import { receiptUrl, receiptView } from "./receipts";

/** The answers of a face to a payment, and of its prepare and handoff paths. */

/** A settled payment (200): the goods, inline, with the receipt. */
export function paidView(goods: Goods, receipt: paymentsV1.Receipt, redelivered: boolean, baseUrl: string) {
  const view = receiptView(receipt, baseUrl);
  return {
    fulfillment: { mode: "inline", payload: goods.payloadJson === undefined ? null : (JSON.parse(goods.payloadJson) as unknown) },
    receipt: view,
    receipt_url: view.receipt_url,
    redelivered,
    test_mode: view.test_mode,
  };
}

/** A payment broadcast but not yet confirmed (202): never a fresh 402 that would invite a second payment. */
export function pendingPaymentView(r: paymentsV1.SubmitPaymentResponse, baseUrl: string) {
  const url = receiptUrl(baseUrl, r.paymentId);
  return {
    status: "pending",
    payment_id: r.paymentId,
    tx_hash: r.txHash || null,
    receipt_url: url,
    poll: url,
    message:
      "The payment was submitted on-chain and is not confirmed yet. Do not pay again: poll receipt_url (or present the same payment again) for the goods and the receipt.",
  };
}

/** The typed data a buyer signs for a face, and the payload to put the signature in. */
export function preparedView(r: paymentsV1.PreparePaymentResponse, resourceUrl: string) {
  const { typedData, payloadStub } = preparedPayment(
    requirementFromMessage(answered(r.requirement, "requirement")),
    authorizationFromMessage(answered(r.authorization, "authorization")),
    resourceUrl,
  );
  return {
    network: r.network,
    typed_data: typedData,
    payload_stub: payloadStub,
    how: "Sign typed_data with eth_signTypedData_v4, put the signature in payload_stub.payload.signature, base64 the JSON and send it as PAYMENT-SIGNATURE (or X-PAYMENT) on GET of the face URL.",
  };
}

/** The payment that carried a handoff nonce. */
export function handoffView(r: paymentsV1.FindHandoffResponse, baseUrl: string) {
  return { payment_id: r.paymentId, receipt_url: receiptUrl(baseUrl, r.paymentId), escrow_state: null, test_mode: r.testMode };
}
