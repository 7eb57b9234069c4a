import { create } from "@bufbuild/protobuf";
import { paymentsV1 } from "@c402/contracts";
import { BASE_URL, CHECKOUT_ID, PAYER, REQUIREMENT, recorded, servers, SITE_URL, bodyOf } from "../support/fake-gateway";

/** POST /c/{id}/prepare and /c/{id}/test/prepare: the typed data a buyer signs (routes/prepare.ts). */

const serve = servers();
const TYPED_DATA = { domain: { name: "USDC rehearsal - no funds move", version: "2" }, primaryType: "TransferWithAuthorization" };
const STUB = { x402Version: 2, accepted: REQUIREMENT, payload: { signature: "", authorization: { from: PAYER } } };

const prepareFakes = () =>
  recorded({
    payments: {
      preparePayment: async () =>
        create(paymentsV1.PreparePaymentResponseSchema, {
          network: "eip155:84532",
          typedDataJson: JSON.stringify(TYPED_DATA),
          payloadStubJson: JSON.stringify(STUB),
        }),
    },
  });

const post = (url: string, body: unknown) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("prepare", () => {
  it("asks payments for the face's typed data and answers it with the payload stub", async () => {
    const { fakes, calls } = prepareFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/c/${CHECKOUT_ID}/test/prepare`, { payer: PAYER, network: "eip155:84532" });
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toEqual({
      network: "eip155:84532",
      typed_data: TYPED_DATA,
      payload_stub: STUB,
      how: expect.stringContaining("eth_signTypedData_v4"),
    });
    expect(calls.map((c) => c.req)).toEqual([
      { checkoutId: CHECKOUT_ID, face: paymentsV1.Face.TEST, payer: PAYER, network: "eip155:84532", resourceUrl: `${BASE_URL}/c/${CHECKOUT_ID}/test` },
    ]);
  });

  it("prepares the live face at /c/{id}/prepare, leaving the network to payments when it is null", async () => {
    const { fakes, calls } = prepareFakes();
    const { url } = await serve.app(fakes);
    expect((await post(`${url}/c/${CHECKOUT_ID}/prepare`, { payer: PAYER, network: null })).status).toBe(200);
    expect(calls.map((c) => c.req)).toEqual([
      { checkoutId: CHECKOUT_ID, face: paymentsV1.Face.LIVE, payer: PAYER, resourceUrl: `${BASE_URL}/c/${CHECKOUT_ID}` },
    ]);
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
        { field: "colour", reason: "is not a known field" },
        { field: "network", reason: "has the wrong type" },
      ]),
    );
    expect(calls).toHaveLength(0);
  });
});
