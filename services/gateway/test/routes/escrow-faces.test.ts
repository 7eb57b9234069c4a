import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { authorizationMessage, escrowV1, paymentsV1, requirementMessage, settleResponseMessage } from "@c402/contracts";
import { encodeHeader, type ExactEvmAuthorization, type PaymentRequirements } from "@c402/x402";
import { BASE_URL, bodyOf, CHECKOUT_ID, checkout, PAYER, PAYMENT_ID, recorded, servers, TX_HASH } from "../support/fake-gateway";

/**
 * An escrow checkout's faces (ADR 19): /e/{id} and its twins answered by the
 * /c/ face machinery, prepare's escrow deposit, the held purchase, the
 * status and the handoff (routes/faces.ts, prepare.ts, handoff.ts, escrows.ts).
 */

const serve = servers();
const ESCROW_ID = "esc_VintageLamp0000000000000";
const CONTRACT = "0x6666666666666666666666666666666666666666";
const SALT = `0x${"5a".repeat(32)}`;
const NONCE = "qr_nonce_0123456789abcdef";
const REQUIREMENT = {
  scheme: "escrow",
  network: "eip155:8453",
  asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
  amount: "10120000",
  payTo: CONTRACT,
  maxTimeoutSeconds: 300,
  extra: { name: "USD Coin", version: "2", checkoutId: ESCROW_ID, escrow: { settle_seconds: 604_800 } },
} satisfies PaymentRequirements;
const AUTHORIZATION: ExactEvmAuthorization = {
  from: PAYER,
  to: CONTRACT,
  value: "10120000",
  validAfter: "0",
  validBefore: "1735787345",
  nonce: `0x${"e5".repeat(32)}`,
};

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

function escrowFakes() {
  return recorded({
    payments: {
      preparePayment: async () =>
        create(paymentsV1.PreparePaymentResponseSchema, {
          network: REQUIREMENT.network,
          requirement: requirementMessage(REQUIREMENT),
          authorization: authorizationMessage(AUTHORIZATION),
          escrowSalt: SALT,
        }),
      submitPayment: async () =>
        create(paymentsV1.SubmitPaymentResponseSchema, {
          redelivered: false,
          settleResponse: settleResponseMessage({ success: true, transaction: TX_HASH, network: REQUIREMENT.network, payer: PAYER }),
          checkout: checkout({ id: ESCROW_ID, armed: true, reusable: true, payloadJson: JSON.stringify({ tracking: "1Z999" }) }),
          status: paymentsV1.PaymentStatus.HELD,
          paymentId: PAYMENT_ID,
          txHash: TX_HASH,
        }),
      findHandoff: async () => create(paymentsV1.FindHandoffResponseSchema, { paymentId: PAYMENT_ID, testMode: false, escrowHeld: true }),
    },
    escrow: {
      getEscrow: async (req) =>
        create(escrowV1.GetEscrowResponseSchema, {
          escrow: {
            paymentId: req.paymentId ?? "",
            checkoutId: ESCROW_ID,
            accountId: "acct_Seller000000000000000000",
            network: REQUIREMENT.network,
            contract: CONTRACT,
            state: escrowV1.EscrowState.HELD,
            nextStep: "If nobody acts, the payment is released to the seller on 14 December 2026 at 12:00 UTC.",
            deadline: timestampFromDate(new Date("2026-12-14T12:00:00Z")),
            testMode: false,
          },
        }),
    },
  });
}

describe("escrow faces (/e/{id})", () => {
  it("prepares the deposit: a ReceiveWithAuthorization to the contract, the salt in the answer and in the payload stub", async () => {
    const { fakes, of } = escrowFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/e/${ESCROW_ID}/prepare`, { payer: PAYER });
    expect(res.status).toBe(200);
    const body = await bodyOf(res);
    expect(body.typed_data.primaryType).toBe("ReceiveWithAuthorization");
    expect(Object.keys(body.typed_data.types)).toEqual(["EIP712Domain", "ReceiveWithAuthorization"]);
    expect(body.typed_data.domain).toEqual({ name: "USD Coin", version: "2", chainId: 8453, verifyingContract: REQUIREMENT.asset });
    expect(body.typed_data.message).toMatchObject({ to: CONTRACT, value: "10120000", nonce: AUTHORIZATION.nonce });
    expect(body.salt).toBe(SALT);
    expect(body.payload_stub.payload).toEqual({ signature: "", authorization: AUTHORIZATION, salt: SALT });
    expect(body.pay_url).toBe(`${BASE_URL}/e/${ESCROW_ID}`);
    expect(of("preparePayment")).toEqual([{ checkoutId: ESCROW_ID, face: paymentsV1.Face.LIVE, payer: PAYER }]);
  });

  it("answers a held purchase with the goods and, instead of a receipt, the escrow's payment id and status URL", async () => {
    const { fakes } = escrowFakes();
    const { url } = await serve.app(fakes);
    const header = encodeHeader({
      x402Version: 2,
      accepted: REQUIREMENT,
      payload: { signature: `0x${"11".repeat(65)}`, authorization: AUTHORIZATION, salt: SALT },
    });
    for (const res of [
      await fetch(`${url}/e/${ESCROW_ID}`, { headers: { "payment-signature": header } }),
      await post(`${url}/e/${ESCROW_ID}/pay`, {}, { "payment-signature": header }),
    ]) {
      expect(res.status).toBe(200);
      expect(await bodyOf(res)).toEqual({
        fulfillment: { mode: "inline", payload: { tracking: "1Z999" } },
        receipt: null,
        escrow: {
          payment_id: PAYMENT_ID,
          status: "held",
          status_url: `${BASE_URL}/e/${ESCROW_ID}/status?payment_id=${PAYMENT_ID}`,
          note: expect.stringContaining("receipt appears when it is released"),
        },
        redelivered: false,
        test_mode: false,
      });
    }
  });

  it("answers a deposit not confirmed yet with 202 and the escrow's status URL to poll, never a fresh 402", async () => {
    const { fakes } = recorded({
      payments: {
        submitPayment: async () =>
          create(paymentsV1.SubmitPaymentResponseSchema, {
            settleResponse: settleResponseMessage({
              success: false,
              errorReason: "settlement_pending",
              transaction: TX_HASH,
              network: REQUIREMENT.network,
              payer: PAYER,
            }),
            status: paymentsV1.PaymentStatus.PENDING,
            paymentId: PAYMENT_ID,
            txHash: TX_HASH,
          }),
      },
    });
    const { url } = await serve.app(fakes);
    const header = encodeHeader({
      x402Version: 2,
      accepted: REQUIREMENT,
      payload: { signature: `0x${"11".repeat(65)}`, authorization: AUTHORIZATION, salt: SALT },
    });
    const res = await post(`${url}/e/${ESCROW_ID}/pay`, {}, { "payment-signature": header });
    expect(res.status).toBe(202);
    expect(await bodyOf(res)).toMatchObject({ status: "pending", payment_id: PAYMENT_ID, poll: `${BASE_URL}/e/${ESCROW_ID}/status?payment_id=${PAYMENT_ID}` });
  });

  it("answers the escrow's status with its next step; 404 for an escrow of another checkout; 422 without a payment id", async () => {
    const { fakes, of } = escrowFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/e/${ESCROW_ID}/status?payment_id=${PAYMENT_ID}`);
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toEqual({
      object: "escrow_status",
      payment_id: PAYMENT_ID,
      checkout_id: ESCROW_ID,
      network: "eip155:8453",
      state: "held",
      next_step: "If nobody acts, the payment is released to the seller on 14 December 2026 at 12:00 UTC.",
      deadline: "2026-12-14T12:00:00.000Z",
      receipt_url: null,
      test_mode: false,
    });
    expect(of("getEscrow")).toEqual([{ paymentId: PAYMENT_ID }]);
    expect((await fetch(`${url}/e/esc_AnotherCheckout000000000000/status?payment_id=${PAYMENT_ID}`)).status).toBe(404);
    expect((await fetch(`${url}/e/${ESCROW_ID}/status`)).status).toBe(422);
  });

  it("answers the handoff with escrow_state held", async () => {
    const { fakes } = escrowFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/e/${ESCROW_ID}/handoff/${NONCE}`);
    expect(await bodyOf(res)).toEqual({ payment_id: PAYMENT_ID, receipt_url: `${BASE_URL}/r/${PAYMENT_ID}`, escrow_state: "held", test_mode: false });
  });

  it("keeps each face to its own ids: an escrow checkout is not under /c/, a plain one not under /e/", async () => {
    const { fakes, calls } = escrowFakes();
    const { url } = await serve.app(fakes);
    expect((await post(`${url}/c/${ESCROW_ID}/prepare`, { payer: PAYER })).status).toBe(404);
    expect((await post(`${url}/e/${CHECKOUT_ID}/prepare`, { payer: PAYER })).status).toBe(404);
    expect((await fetch(`${url}/e/${CHECKOUT_ID}/handoff/${NONCE}`)).status).toBe(404);
    expect(calls).toHaveLength(0);
  });
});
