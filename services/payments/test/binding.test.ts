import {
  decodeHeader,
  encodeHeader,
  parsePaymentPayload,
  signExactEvmPayment,
  transferWithAuthorizationTypedData,
  viemTypedData,
  type PaymentPayload,
  type PaymentRequirements,
} from "@c402/x402";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { evmPayloadOf, matchRequirement, verifyPayment } from "../src/domain/verify-payment";

/**
 * G13: binding and verification correctness. Starting from a valid payment,
 * change one field (to, value, validAfter, validBefore, nonce, chainId,
 * verifyingContract, asset, payTo, network) and the payment is refused.
 */
const issued: PaymentRequirements = {
  scheme: "exact",
  network: "eip155:84532",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  amount: "110500",
  payTo: "0x24E82F4038F8d58C06057A002D4eF11fBdD3a3c2",
  maxTimeoutSeconds: 300,
  extra: { name: "USDC", version: "2" },
};
const buyer = privateKeyToAccount(generatePrivateKey());
const now = Math.floor(Date.now() / 1000);

async function accepted(payload: PaymentPayload): Promise<boolean> {
  try {
    const p = evmPayloadOf(parsePaymentPayload(decodeHeader(encodeHeader(payload))));
    await verifyPayment(p, matchRequirement(p, [issued]), now);
    return true;
  } catch {
    return false;
  }
}

/** Re-signs the authorization over a different EIP-712 domain (another chain or token contract). */
async function signedOverDomain(payload: PaymentPayload, domain: Partial<{ chainId: number; verifyingContract: Hex }>): Promise<PaymentPayload> {
  const typed = viemTypedData(transferWithAuthorizationTypedData(issued, payload.payload.authorization));
  const signature = await buyer.signTypedData({ ...typed, domain: { ...typed.domain, ...domain } });
  return { ...payload, payload: { ...payload.payload, signature } };
}

describe("binding of a payment to what was issued (G13)", () => {
  let valid: PaymentPayload;
  beforeAll(async () => {
    valid = await signExactEvmPayment(buyer, issued);
  });

  it("accepts the unmodified payment", async () => {
    expect(await accepted(valid)).toBe(true);
  });

  const other = "0x1111111111111111111111111111111111111111";
  const mutations: [string, (p: PaymentPayload) => PaymentPayload | Promise<PaymentPayload>][] = [
    ["authorization.to", (p) => ({ ...p, payload: { ...p.payload, authorization: { ...p.payload.authorization, to: other } } })],
    ["authorization.value (+1)", (p) => ({ ...p, payload: { ...p.payload, authorization: { ...p.payload.authorization, value: "110501" } } })],
    ["authorization.value (-1)", (p) => ({ ...p, payload: { ...p.payload, authorization: { ...p.payload.authorization, value: "110499" } } })],
    ["authorization.validAfter", (p) => ({ ...p, payload: { ...p.payload, authorization: { ...p.payload.authorization, validAfter: "1" } } })],
    ["authorization.validBefore", (p) => ({ ...p, payload: { ...p.payload, authorization: { ...p.payload.authorization, validBefore: String(now + 999) } } })],
    ["authorization.nonce", (p) => ({ ...p, payload: { ...p.payload, authorization: { ...p.payload.authorization, nonce: `0x${"ab".repeat(32)}` } } })],
    ["authorization.from", (p) => ({ ...p, payload: { ...p.payload, authorization: { ...p.payload.authorization, from: other } } })],
    ["signed for another chainId", (p) => signedOverDomain(p, { chainId: 8453 })],
    ["signed for another verifyingContract", (p) => signedOverDomain(p, { verifyingContract: other })],
    ["accepted.asset", (p) => ({ ...p, accepted: { ...(p.accepted as PaymentRequirements), asset: other } })],
    ["accepted.payTo", (p) => ({ ...p, accepted: { ...(p.accepted as PaymentRequirements), payTo: other } })],
    ["accepted.network", (p) => ({ ...p, accepted: { ...(p.accepted as PaymentRequirements), network: "eip155:8453" } })],
    ["accepted.amount", (p) => ({ ...p, accepted: { ...(p.accepted as PaymentRequirements), amount: "1" } })],
    ["accepted.extra.name", (p) => ({ ...p, accepted: { ...(p.accepted as PaymentRequirements), extra: { name: "USD Coin", version: "2" } } })],
  ];

  it.each(mutations)("refuses a change of %s", async (_field, mutate) => {
    expect(await accepted(await mutate(structuredClone(valid)))).toBe(false);
  });
});
