import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type { PaymentRequirements } from "@c402/x402";
import {
  authorizationFromMessage,
  authorizationMessage,
  paymentsV1,
  requirementFromMessage,
  requirementMessage,
  settleResponseFromMessage,
  settleResponseMessage,
  supportedFromMessage,
  supportedMessage,
  verifyResponseFromMessage,
  verifyResponseMessage,
  type SupportedKinds,
} from "../src";

/** The x402 objects survive the wire (binary, as gRPC sends them) unchanged: same keys, same order, nothing added. */
describe("x402 objects as payments.v1 messages", () => {
  const base: PaymentRequirements = {
    scheme: "exact",
    network: "eip155:84532",
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    amount: "110500",
    payTo: "0x00000000000000000000000000000000000000aa",
    maxTimeoutSeconds: 300,
    extra: { name: "USD Coin", version: "2", checkoutId: "chk_000000000000000000000001" },
  };
  const overTheWire = <T extends { $typeName: string }>(schema: Parameters<typeof toBinary>[0], m: T): T =>
    fromBinary(schema, toBinary(schema, m)) as unknown as T;

  it.each([
    ["a live requirement", base],
    ["a rehearsal requirement", { ...base, extra: { name: "USDC rehearsal - no funds move", version: "2", checkoutId: "chk_x", rehearsal: true } }],
    [
      "a series requirement (extra.schedule, ADR 20)",
      {
        ...base,
        extra: {
          name: "USD Coin",
          version: "2",
          schedule: {
            interval_days: 7,
            periods: 3,
            windows: [
              { period: 1, opens_after_seconds: 604_800, closes_after_seconds: 1_209_600 },
              { period: 2, opens_after_seconds: 1_209_600, closes_after_seconds: 1_814_400 },
            ],
          },
          checkoutId: "chk_000000000000000000000001",
        },
      },
    ],
  ])("%s", (_name, requirement) => {
    const back = requirementFromMessage(overTheWire(paymentsV1.PaymentRequirementSchema, requirementMessage(requirement)));
    expect(back).toEqual(requirement);
    expect(JSON.stringify(back)).toBe(JSON.stringify(requirement));
  });

  it("an authorization", () => {
    const a = { from: "0x1", to: "0x2", value: "110500", validAfter: "0", validBefore: "1999999999", nonce: `0x${"ab".repeat(32)}` };
    expect(authorizationFromMessage(overTheWire(paymentsV1.AuthorizationSchema, authorizationMessage(a)))).toEqual(a);
  });

  it.each([
    [{ success: true, transaction: "0xabc", network: "eip155:84532", payer: "0x1" }],
    [{ success: false, errorReason: "invalid_exact_evm_payload_signature", transaction: "", network: "eip155:84532" }],
    [{ success: false, errorReason: "settlement_pending", errorMessage: "later", transaction: "0xabc", network: "eip155:84532", payer: "0x1" }],
  ])("a settle response %#", (r) => {
    const m = overTheWire(paymentsV1.SettleResponseSchema, settleResponseMessage(r));
    expect(settleResponseFromMessage(m)).toEqual(r);
  });

  it("a verify response, valid or not", () => {
    for (const r of [
      { isValid: true, payer: "0x1" },
      { isValid: false, invalidReason: "invalid_payment_requirements", invalidMessage: "not issued" },
    ]) {
      const m = overTheWire(paymentsV1.VerifyResponseSchema, verifyResponseMessage(r));
      expect(verifyResponseFromMessage(m)).toEqual(r);
    }
    expect(verifyResponseFromMessage(undefined)).toEqual({ isValid: false });
  });

  it("what the facilitator supports, with and without signers", () => {
    const cases: SupportedKinds[] = [
      { kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:84532" }], extensions: [], signers: { "eip155:*": ["0x1", "0x2"] } },
      { kinds: [], extensions: [], signers: {} },
    ];
    for (const s of cases) {
      expect(supportedFromMessage(overTheWire(paymentsV1.FacilitatorSupportedResponseSchema, supportedMessage(s)))).toEqual(s);
    }
  });
});
