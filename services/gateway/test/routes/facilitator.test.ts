import { create } from "@bufbuild/protobuf";
import { paymentsV1, settleResponseMessage, supportedMessage, verifyResponseMessage } from "@c402/contracts";
import type { SettleResponse, VerifyResponse } from "@c402/x402";
import { PAYER, recorded, REQUIREMENT, servers, TX_HASH, bodyOf } from "../support/fake-gateway";

/** /x402/{family}/supported, verify and settle (routes/facilitator.ts). */

const serve = servers();
const PAYLOAD = { x402Version: 2, accepted: REQUIREMENT, payload: { signature: "0x11", authorization: { from: PAYER } } };
const VERIFIED = { isValid: true, payer: PAYER };
const SETTLED = { success: true, transaction: TX_HASH, network: "eip155:84532", payer: PAYER };
const SIGNER = "0x3333333333333333333333333333333333333333";
/** x402 GET /supported: the kinds settled, no extensions, and the addresses that sign settlements per family pattern. */
const SUPPORTED = {
  kinds: [
    { x402Version: 2, scheme: "exact", network: "eip155:8453" },
    { x402Version: 1, scheme: "exact", network: "base" },
  ],
  extensions: [],
  signers: { "eip155:*": [SIGNER] },
};

const facilitatorFakes = (verified: VerifyResponse = VERIFIED, settled: SettleResponse = SETTLED) =>
  recorded({
    payments: {
      facilitatorSupported: async () => supportedMessage(SUPPORTED),
      facilitatorVerify: async () => create(paymentsV1.FacilitatorVerifyResponseSchema, { verifyResponse: verifyResponseMessage(verified) }),
      facilitatorSettle: async () => create(paymentsV1.FacilitatorSettleResponseSchema, { settleResponse: settleResponseMessage(settled) }),
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
    expect(calls).toEqual([{ client: "payments", method: "facilitatorVerify", req: forwarded, options: undefined }]);
  });

  it("forwards settle with a minute to settle on-chain and answers its SettleResponse", async () => {
    const { fakes, calls } = facilitatorFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/x402/base/settle`, request);
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toEqual(SETTLED);
    expect(calls).toEqual([{ client: "payments", method: "facilitatorSettle", req: forwarded, options: { timeoutMs: 60_000 } }]);
  });

  it("answers a refused payment 200 with isValid or success false and payments' reason, as it is", async () => {
    const invalid = { isValid: false, invalidReason: "invalid_exact_evm_payload_signature", invalidMessage: "The signature does not match.", payer: PAYER };
    const failed = { success: false, errorReason: "transaction_failed", errorMessage: "The transfer reverted.", transaction: TX_HASH, network: "eip155:8453" };
    const { fakes, called } = facilitatorFakes(invalid, failed);
    const { url } = await serve.app(fakes);
    const verify = await post(`${url}/x402/base/verify`, request);
    expect(verify.status).toBe(200);
    expect(await bodyOf(verify)).toEqual(invalid);
    const settle = await post(`${url}/x402/base/settle`, request);
    expect(settle.status).toBe(200);
    // No payer when payments names none: the key is absent, not null or "".
    expect(await bodyOf(settle)).toStrictEqual(failed);
    expect(called()).toEqual(["payments.facilitatorVerify", "payments.facilitatorSettle"]);
  });

  it("answers supported from payments for the family in the path", async () => {
    const { fakes, calls } = facilitatorFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/x402/base/supported`);
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toEqual(SUPPORTED);
    expect(calls).toEqual([{ client: "payments", method: "facilitatorSupported", req: { family: "base" }, options: undefined }]);
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
