import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";
import {
  isEvmPayload,
  acceptedMatches,
  decodeHeader,
  encodeHeader,
  EVM_NETWORKS,
  isValidEoaSignature,
  parsePaymentPayload,
  parseRequirements,
  PaymentHeaderError,
  signExactEvmPayment,
  syntheticTxHash,
  type PaymentRequirements,
} from "../src";

const requirement: PaymentRequirements = {
  scheme: "exact",
  network: "eip155:84532",
  asset: EVM_NETWORKS["eip155:84532"].usdc,
  amount: "110500",
  payTo: "0x1111111111111111111111111111111111111111",
  maxTimeoutSeconds: 300,
  extra: { name: "USDC", version: "2" },
};

describe("x402 wire format", () => {
  it("encodes headers as standard padded base64 of JSON and decodes them back", () => {
    const value = { x402Version: 2, note: "ü?>" };
    const header = encodeHeader(value);
    expect(header).toMatch(/^[A-Za-z0-9+/]*={0,2}$/);
    expect(decodeHeader(header)).toEqual(value);
  });

  it.each([
    ["empty", ""],
    ["base64url alphabet", Buffer.from('{"a":"??>"}').toString("base64url")],
    ["whitespace", "eyJ hIjoxfQ=="],
    ["not JSON", Buffer.from("hello").toString("base64")],
    ["a JSON array", Buffer.from("[1]").toString("base64")],
    ["a JSON string", Buffer.from('"x"').toString("base64")],
    ["oversized", Buffer.from(JSON.stringify({ a: "x".repeat(20_000) })).toString("base64")],
  ])("rejects %s", (_name, value) => {
    expect(() => decodeHeader(value)).toThrow(PaymentHeaderError);
  });

  it("refuses uint256 fields above 2^256 - 1 and requirements whose asset, payTo or amount are malformed", async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const payment = await signExactEvmPayment(account, requirement);
    const max = ((1n << 256n) - 1n).toString();
    const withAuth = (patch: Record<string, string>) => ({
      ...payment,
      payload: { ...payment.payload, authorization: { ...payment.payload.authorization, ...patch } },
    });
    expect(() => parsePaymentPayload(withAuth({ validBefore: max }))).not.toThrow();
    for (const field of ["value", "validAfter", "validBefore"]) {
      expect(() => parsePaymentPayload(withAuth({ [field]: (1n << 256n).toString() }))).toThrow(PaymentHeaderError);
      expect(() => parsePaymentPayload(withAuth({ [field]: "9".repeat(78) }))).toThrow(PaymentHeaderError);
    }
    for (const patch of [{ asset: "USDC" }, { payTo: "0x12" }, { payTo: "alice" }, { amount: "-1" }, { amount: "1e6" }, { amount: (1n << 256n).toString() }]) {
      expect(() => parsePaymentPayload({ ...payment, accepted: { ...requirement, ...patch } })).toThrow(PaymentHeaderError);
      expect(() => parseRequirements({ ...requirement, ...patch }, "requirement")).toThrow(/requirement/);
    }
    expect(() => parseRequirements({ ...requirement, maxTimeoutSeconds: 0 })).toThrow(PaymentHeaderError);
    expect(parseRequirements({ ...requirement })).toEqual(requirement);
  });

  it("signs like the official client and verifies the EOA signature", async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const payment = await signExactEvmPayment(account, requirement, { resourceUrl: "http://127.0.0.1/c/chk_x" });
    const parsed = parsePaymentPayload(decodeHeader(encodeHeader(payment)));
    if (!isEvmPayload(parsed)) throw new Error("an EVM requirement's payload parses as EVM");
    expect(parsed.accepted).toEqual(requirement);
    expect(parsed.payload.authorization.validAfter).toBe("0");
    expect(await isValidEoaSignature(requirement, parsed.payload.authorization, parsed.payload.signature)).toBe(true);
  });

  it("rejects a signature over any other field value", async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const payment = await signExactEvmPayment(account, requirement);
    const auth = payment.payload.authorization;
    for (const mutated of [
      { ...auth, value: "110501" },
      { ...auth, to: "0x2222222222222222222222222222222222222222" },
      { ...auth, validBefore: String(Number(auth.validBefore) + 1) },
      { ...auth, nonce: `0x${"ab".repeat(32)}` },
      { ...auth, from: privateKeyToAccount(generatePrivateKey()).address },
    ]) {
      expect(await isValidEoaSignature(requirement, mutated, payment.payload.signature)).toBe(false);
    }
    expect(await isValidEoaSignature({ ...requirement, network: "eip155:8453" }, auth, payment.payload.signature)).toBe(false);
    expect(await isValidEoaSignature({ ...requirement, extra: { name: "USD Coin", version: "2" } }, auth, payment.payload.signature)).toBe(false);
  });

  it("rejects malformed payloads with a reason", () => {
    const good = {
      x402Version: 2,
      accepted: requirement,
      payload: {
        signature: `0x${"1".repeat(130)}`,
        authorization: { from: requirement.payTo, to: requirement.payTo, value: "1", validAfter: "0", validBefore: "9", nonce: `0x${"0".repeat(64)}` },
      },
    };
    expect(() => parsePaymentPayload(good)).not.toThrow();
    expect(() => parsePaymentPayload({ ...good, x402Version: 3 })).toThrow(expect.objectContaining({ reason: "invalid_x402_version" }));
    expect(() => parsePaymentPayload({ ...good, payload: "x" })).toThrow(PaymentHeaderError);
    expect(() => parsePaymentPayload({ ...good, accepted: undefined })).toThrow(PaymentHeaderError);
    for (const key of ["from", "to", "value", "validAfter", "validBefore", "nonce"]) {
      const auth = { ...good.payload.authorization, [key]: 12 };
      expect(() => parsePaymentPayload({ ...good, payload: { ...good.payload, authorization: auth } })).toThrow(new RegExp(key));
    }
    expect(() => parsePaymentPayload({ ...good, payload: { ...good.payload, authorization: { ...good.payload.authorization, value: "-1" } } })).toThrow(
      PaymentHeaderError,
    );
  });

  it("matches accepted by core fields and declared extra keys (client may add keys)", () => {
    expect(acceptedMatches({ ...requirement, extra: { ...requirement.extra, added: 1 } }, requirement)).toBe(true);
    expect(acceptedMatches({ ...requirement, payTo: requirement.payTo.toUpperCase().replace("0X", "0x") }, requirement)).toBe(true);
    expect(acceptedMatches({ ...requirement, amount: "110499" }, requirement)).toBe(false);
    expect(acceptedMatches({ ...requirement, maxTimeoutSeconds: 60 }, requirement)).toBe(false);
    expect(acceptedMatches({ ...requirement, extra: { name: "USDC" } }, requirement)).toBe(false);
  });

  it("makes distinct synthetic hashes per payment", () => {
    const a = syntheticTxHash("eip155:84532", requirement.payTo, `0x${"1".repeat(64)}`);
    expect(a).toMatch(/^0x[0-9a-f]{64}$/);
    expect(syntheticTxHash("eip155:84532", requirement.payTo, `0x${"2".repeat(64)}`)).not.toBe(a);
  });
});
