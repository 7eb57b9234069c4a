import { create } from "@bufbuild/protobuf";
import { authorizationMessage, paymentsV1, requirementMessage } from "@c402/contracts";
import type { ExactEvmAuthorization, PaymentRequirements } from "@c402/x402";
import { BASE_URL, CHECKOUT_ID, PAY_TO, PAYER, REQUIREMENT, recorded, servers, SITE_URL, bodyOf } from "../support/fake-gateway";

/** POST /c/{id}/prepare and /c/{id}/test/prepare: the typed data a buyer signs (routes/prepare.ts). */

const serve = servers();
const AUTHORIZATION: ExactEvmAuthorization = {
  from: PAYER,
  to: PAY_TO,
  value: "110500",
  validAfter: "1735787045",
  validBefore: "1735787345",
  nonce: `0x${"33".repeat(32)}`,
};
/** A live requirement on Base mainnet (another chain, token and EIP-712 domain than REQUIREMENT's rehearsal). */
const LIVE_REQUIREMENT = {
  scheme: "exact",
  network: "eip155:8453",
  asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
  amount: "110500",
  payTo: PAY_TO,
  maxTimeoutSeconds: 300,
  extra: { name: "USD Coin", version: "2", checkoutId: CHECKOUT_ID },
} satisfies PaymentRequirements;

/** The EIP-712 types of an EIP-3009 transferWithAuthorization, with EIP712Domain as eth_signTypedData_v4 wants it. */
const TYPES = {
  EIP712Domain: [
    { name: "name", type: "string" },
    { name: "version", type: "string" },
    { name: "chainId", type: "uint256" },
    { name: "verifyingContract", type: "address" },
  ],
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
};

/** Payments answering the requirement and the authorization to sign for it (the gateway builds the typed data). */
const prepareFakes = (requirement: PaymentRequirements = REQUIREMENT) =>
  recorded({
    payments: {
      preparePayment: async () =>
        create(paymentsV1.PreparePaymentResponseSchema, {
          network: requirement.network,
          requirement: requirementMessage(requirement),
          authorization: authorizationMessage(AUTHORIZATION),
        }),
    },
  });

const post = (url: string, body: unknown) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("prepare", () => {
  it("asks payments for the face's requirement and authorization, and answers the typed data and the payload stub", async () => {
    const { fakes, calls, called } = prepareFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/c/${CHECKOUT_ID}/test/prepare`, { payer: PAYER, network: "eip155:84532" });
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toEqual({
      network: "eip155:84532",
      typed_data: {
        types: TYPES,
        primaryType: "TransferWithAuthorization",
        domain: { name: "USDC rehearsal - no funds move", version: "2", chainId: 84532, verifyingContract: REQUIREMENT.asset },
        message: AUTHORIZATION,
      },
      payload_stub: {
        x402Version: 2,
        resource: { url: `${BASE_URL}/c/${CHECKOUT_ID}/test` },
        accepted: REQUIREMENT,
        payload: { signature: "", authorization: AUTHORIZATION },
      },
      how: expect.stringContaining("eth_signTypedData_v4"),
      pay_url: `https://pay.test/c/${CHECKOUT_ID}/test`,
    });
    // The resource URL is the gateway's own: payments is not told it.
    expect(calls.map((c) => c.req)).toStrictEqual([{ checkoutId: CHECKOUT_ID, face: paymentsV1.Face.TEST, payer: PAYER, network: "eip155:84532" }]);
    expect(calls[0]?.req).not.toHaveProperty("resourceUrl");
    expect(called()).toEqual(["payments.preparePayment"]);
  });

  it("prepares the live face at /c/{id}/prepare, leaving the network to payments when it is null", async () => {
    const { fakes, calls, called } = prepareFakes(LIVE_REQUIREMENT);
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/c/${CHECKOUT_ID}/prepare`, { payer: PAYER, network: null });
    expect(res.status).toBe(200);
    const body = await bodyOf(res);
    expect(body.network).toBe("eip155:8453");
    expect(body.typed_data.domain).toEqual({ name: "USD Coin", version: "2", chainId: 8453, verifyingContract: LIVE_REQUIREMENT.asset });
    expect(body.typed_data.message).toEqual(AUTHORIZATION);
    expect(body.payload_stub).toEqual({
      x402Version: 2,
      resource: { url: `${BASE_URL}/c/${CHECKOUT_ID}` },
      accepted: LIVE_REQUIREMENT,
      payload: { signature: "", authorization: AUTHORIZATION },
    });
    expect(body.payload_stub.accepted.extra).not.toHaveProperty("rehearsal");
    expect(calls.map((c) => c.req)).toStrictEqual([{ checkoutId: CHECKOUT_ID, face: paymentsV1.Face.LIVE, payer: PAYER }]);
    expect(called()).toEqual(["payments.preparePayment"]);
  });

  it("refuses a body without a payer, or with unknown fields, with 422 naming each field", async () => {
    const { fakes, calls } = prepareFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/c/${CHECKOUT_ID}/prepare`, { network: 7, colour: "red" });
    expect(res.status).toBe(422);
    const body = await bodyOf(res);
    expect(body.type).toBe(`${SITE_URL}/problems/invalid-request`);
    expect(body.errors).toEqual(
      expect.arrayContaining([
        { field: "payer", reason: "is required" },
        { field: "network", reason: "has the wrong type" },
        { field: "colour", reason: "is not a known field" },
      ]),
    );
    expect(calls).toHaveLength(0);
  });
});
