import fc from "fast-check";
import { bytesToHex, hashTypedData, keccak256, type Hex } from "viem";
import createJavaScriptKeccakHash from "keccak/js";
import { keccak256Bytes, keccak256On } from "../src/keccak";
import { authorizationDigest, transferWithAuthorizationTypedData, viemTypedData, type ExactEvmAuthorization, type PaymentRequirements } from "../src";

/** The digest every paid request verifies, computed by hand with a kept domain separator: always viem's hashTypedData. */
const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => `0x${Buffer.from(b).toString("hex")}` as Hex);
const mixedCase = (h: Hex) =>
  fc
    .array(fc.boolean(), { minLength: h.length, maxLength: h.length })
    .map((up) => [...h].map((c, i) => (i > 1 && up[i] ? c.toUpperCase() : c)).join("") as Hex);
const address = hex(20).chain(mixedCase);
const uint256 = fc.oneof(fc.constant(0n), fc.constant((1n << 256n) - 1n), fc.bigInt({ min: 0n, max: (1n << 256n) - 1n })).map(String);

function requirement(over: { network: string; asset: string; name: string; version: string }): PaymentRequirements {
  return {
    scheme: "exact",
    network: over.network,
    amount: "110500",
    asset: over.asset,
    payTo: "0x2222222222222222222222222222222222222222",
    maxTimeoutSeconds: 300,
    extra: { name: over.name, version: over.version },
  } as PaymentRequirements;
}

/** keccak-256 as the verifier runs it: on the native addon here, on the package's JavaScript in a bundled build. */
const KECCAKS = [
  ["the native addon", keccak256Bytes],
  ["the package's JavaScript (bundled builds)", keccak256On(createJavaScriptKeccakHash)],
] as const;

describe("authorizationDigest", () => {
  it.each(KECCAKS)("hashes with keccak-256 on %s exactly as viem does (300 runs, empty to several blocks)", (_, hash) => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 700 }), (data) => expect(bytesToHex(hash(data))).toBe(keccak256(data))),
      { numRuns: 300, seed: 3009 },
    );
  });

  it.each(KECCAKS)("answers each hash on %s in bytes of its own: the next hash on the shared state leaves an earlier answer as it was", (_, hash) => {
    const first = hash(new Uint8Array([1, 2, 3]));
    const before = bytesToHex(first);
    hash(new Uint8Array(200).fill(9));
    expect(bytesToHex(first)).toBe(before);
    expect(before).toBe(keccak256(new Uint8Array([1, 2, 3])));
  });

  it("equals viem's hashTypedData of the typed data, for any authorization and domain (400 runs)", () => {
    fc.assert(
      fc.property(
        fc.record({
          network: fc.oneof(
            fc.constant("eip155:8453"),
            fc.constant("eip155:84532"),
            fc.integer({ min: 1, max: 2 ** 40 }).map((n) => `eip155:${n}`),
          ),
          asset: address,
          name: fc.string({ unit: "binary", maxLength: 40 }),
          version: fc.string({ maxLength: 8 }),
        }),
        fc.record({ from: address, to: address, value: uint256, validAfter: uint256, validBefore: uint256, nonce: hex(32) }),
        (domain, authorization: ExactEvmAuthorization) => {
          const r = requirement(domain);
          expect(authorizationDigest(r, authorization)).toBe(hashTypedData(viemTypedData(transferWithAuthorizationTypedData(r, authorization))));
          // A second time, from the kept domain separator.
          expect(authorizationDigest(r, authorization)).toBe(hashTypedData(viemTypedData(transferWithAuthorizationTypedData(r, authorization))));
        },
      ),
      { numRuns: 400, seed: 1602 },
    );
  });

  it("refuses what is not an authorization: a value past 2^256 - 1 or negative, a short nonce, a malformed address", () => {
    const r = requirement({ network: "eip155:84532", asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", name: "USDC", version: "2" });
    const ok: ExactEvmAuthorization = {
      from: "0x1111111111111111111111111111111111111111",
      to: "0x2222222222222222222222222222222222222222",
      value: "110500",
      validAfter: "0",
      validBefore: "1999999999",
      nonce: `0x${"ab".repeat(32)}`,
    };
    expect(authorizationDigest(r, ok)).toMatch(/^0x[0-9a-f]{64}$/);
    for (const bad of [
      { value: (1n << 256n).toString() },
      { validBefore: "-1" },
      { nonce: `0x${"ab".repeat(31)}` },
      { from: "0x11111111111111111111111111111111111111" },
      { to: "1111111111111111111111111111111111111111" },
    ]) {
      expect(() => authorizationDigest(r, { ...ok, ...bad })).toThrow();
    }
  });
});
