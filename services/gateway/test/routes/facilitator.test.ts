import { create } from "@bufbuild/protobuf";
import { paymentsV1 } from "@c402/contracts";
import { PAYER, recorded, REQUIREMENT, servers, TX_HASH, bodyOf } from "../support/fake-gateway";

/** /x402/{family}/supported, verify and settle (routes/facilitator.ts). */

const serve = servers();
const PAYLOAD = { x402Version: 2, accepted: REQUIREMENT, payload: { signature: "0x11", authorization: { from: PAYER } } };
const VERIFIED = { isValid: true, payer: PAYER };
const SETTLED = { success: true, transaction: TX_HASH, network: "eip155:84532", payer: PAYER };

const facilitatorFakes = () =>
  recorded({
    payments: {
      facilitatorSupported: async () =>
        create(paymentsV1.FacilitatorSupportedResponseSchema, {
          supportedJson: JSON.stringify({ kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:8453" }] }),
        }),
      facilitatorVerify: async () => create(paymentsV1.FacilitatorVerifyResponseSchema, { verifyResponseJson: JSON.stringify(VERIFIED) }),
      facilitatorSettle: async () => create(paymentsV1.FacilitatorSettleResponseSchema, { settleResponseJson: JSON.stringify(SETTLED) }),
    },
  });

const post = (url: string, body: unknown) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const request = { network: "eip155:8453", requirement: REQUIREMENT, payload: PAYLOAD };
const forwarded = { family: "base", network: "eip155:8453", requirementJson: JSON.stringify(REQUIREMENT), payloadJson: JSON.stringify(PAYLOAD) };

describe("the facilitator", () => {
  it("forwards verify to payments and answers its VerifyResponse as it is", async () => {
    const { fakes, calls } = facilitatorFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/x402/base/verify`, request);
    expect(res.status).toBe(200);
    // Limited per client address, then per payer (the stricter limit's headers win).
    expect(res.headers.get("x-ratelimit-limit")).toBe("30");
    expect(await bodyOf(res)).toEqual(VERIFIED);
    expect(calls).toEqual([{ method: "facilitatorVerify", req: forwarded, options: undefined }]);
  });

  it("forwards settle with a minute to settle on-chain and answers its SettleResponse", async () => {
    const { fakes, calls } = facilitatorFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/x402/base/settle`, request);
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toEqual(SETTLED);
    expect(calls).toEqual([{ method: "facilitatorSettle", req: forwarded, options: { timeoutMs: 60_000 } }]);
  });

  it("answers supported from payments for the family in the path", async () => {
    const { fakes, calls } = facilitatorFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/x402/base/supported`);
    expect(await bodyOf(res)).toEqual({ kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:8453" }] });
    expect(calls).toEqual([{ method: "facilitatorSupported", req: { family: "base" }, options: undefined }]);
  });

  it("refuses a request on an unknown network or without a payload with 422, asking nothing", async () => {
    const { fakes, calls } = facilitatorFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/x402/base/verify`, { network: "eip155:1", requirement: REQUIREMENT });
    expect(res.status).toBe(422);
    expect((await bodyOf(res)).errors).toEqual(
      expect.arrayContaining([
        { field: "payload", reason: "is required" },
        { field: "network", reason: expect.stringMatching(/pattern/) },
      ]),
    );
    expect(calls).toHaveLength(0);
  });
});
