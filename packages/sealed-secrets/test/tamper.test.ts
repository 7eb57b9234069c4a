import fc from "fast-check";
import { parseKeyring, SealedSecretError, SecretSealer } from "../src";
import { aadArb, flipBit, keyEntry, plaintextArb, replaceSegment, SEGMENT_NAMES, segmentBytes, sealedError } from "./helpers";

const k1 = keyEntry("k1");
const sealer = new SecretSealer(parseKeyring(k1.text));
const AAD = "origin_01J9Z8ZP3N6Q7R8S9T0V1W2X3Y";

const UNAUTHENTIC = sealedError(() => sealer.open(sealer.seal("x", "origin_1"), "origin_2")).message;

/** A few secrets whose every bit is flipped: empty, one byte, an API key, multi-byte unicode. */
const FIXED = ["", "x", "sk_live_51H8xQ2eZvKYlo2C0aBcDeFgHiJkLmNoPq", "пароль🔑"].map((plaintext) => ({ plaintext, sealed: sealer.seal(plaintext, AAD) }));

describe("tamper evidence (G23)", () => {
  it("refuses every single-bit flip of wrappedDek, nonce, ciphertext and tag of a few secrets", () => {
    let flips = 0;
    for (const { sealed } of FIXED) {
      for (const segment of SEGMENT_NAMES) {
        const bits = segmentBytes(sealed, segment).length * 8;
        for (let bit = 0; bit < bits; bit++) {
          const tampered = flipBit(sealed, segment, bit);
          expect(sealedError(() => sealer.open(tampered, AAD)).reason).toBe("unauthentic");
          flips++;
        }
      }
      expect(sealer.open(sealed, AAD)).toBeDefined();
    }
    // Per secret: 60 (wrapped DEK) + 12 (nonce) + 16 (tag) bytes and the ciphertext, 8 bits each.
    expect(flips).toBe(FIXED.reduce((n, { plaintext }) => n + (88 + Buffer.byteLength(plaintext)) * 8, 0));
  });

  it("refuses every single-bit flip (bits 0-7) of every character of the sealed string", () => {
    let flips = 0;
    for (const { sealed } of FIXED) {
      for (let i = 0; i < sealed.length; i++) {
        for (let bit = 0; bit < 8; bit++) {
          const tampered = sealed.slice(0, i) + String.fromCharCode(sealed.charCodeAt(i) ^ (1 << bit)) + sealed.slice(i + 1);
          sealedError(() => sealer.open(tampered, AAD));
          sealedError(() => sealer.rewrap(tampered, AAD));
          flips++;
        }
      }
    }
    expect(flips).toBe(FIXED.reduce((n, { sealed }) => n + sealed.length * 8, 0));
  });

  it("refuses every single-bit flip (bits 0-15) of every code unit of the AAD", () => {
    let flips = 0;
    for (const { sealed } of FIXED) {
      for (let i = 0; i < AAD.length; i++) {
        for (let bit = 0; bit < 16; bit++) {
          const wrongAad = AAD.slice(0, i) + String.fromCharCode(AAD.charCodeAt(i) ^ (1 << bit)) + AAD.slice(i + 1);
          expect(sealedError(() => sealer.open(sealed, wrongAad)).reason).toBe("unauthentic");
          flips++;
        }
      }
    }
    expect(flips).toBe(FIXED.length * AAD.length * 16);
  });

  it("refuses a flip at a random bit of a random segment of 3,000 random secrets", () => {
    let refused = 0;
    fc.assert(
      fc.property(plaintextArb, aadArb, fc.constantFrom(...SEGMENT_NAMES), fc.nat(), (plaintext, aad, segment, position) => {
        const sealed = sealer.seal(plaintext, aad);
        const bits = segmentBytes(sealed, segment).length * 8;
        fc.pre(bits > 0); // an empty plaintext has no ciphertext bits
        const error = sealedError(() => sealer.open(flipBit(sealed, segment, position % bits), aad));
        expect(error.reason).toBe("unauthentic");
        expect(error.message).toBe(UNAUTHENTIC); // fixed: nothing of the value, the AAD or the plaintext
        refused++;
      }),
      { numRuns: 3_000 },
    );
    expect(refused).toBeGreaterThan(2_500);
  });

  it("opens nothing with a wrong AAD (random pairs of distinct resource ids)", () => {
    fc.assert(
      fc.property(plaintextArb, aadArb, aadArb, (plaintext, aad, other) => {
        fc.pre(aad !== other);
        const sealed = sealer.seal(plaintext, aad);
        expect(sealedError(() => sealer.open(sealed, other)).reason).toBe("unauthentic");
        expect(sealedError(() => sealer.rewrap(sealed, other)).reason).toBe("unauthentic");
      }),
      { numRuns: 1_000 },
    );
  });

  it("refuses values swapped between two resources, whole or segment by segment", () => {
    const a = sealer.seal("key of origin A", "origin_A");
    const b = sealer.seal("key of origin B", "origin_B");
    // The whole value moved to the other row.
    expect(sealedError(() => sealer.open(a, "origin_B")).reason).toBe("unauthentic");
    expect(sealedError(() => sealer.open(b, "origin_A")).reason).toBe("unauthentic");
    // Any mix of segments from the two values, under either AAD.
    for (const segment of SEGMENT_NAMES) {
      const mixed = replaceSegment(a, segment, segmentBytes(b, segment));
      for (const aad of ["origin_A", "origin_B"]) expect(sealedError(() => sealer.open(mixed, aad)).reason).toBe("unauthentic");
    }
    // Even two values of the same resource do not mix.
    const a2 = sealer.seal("key of origin A", "origin_A");
    for (const segment of SEGMENT_NAMES) {
      expect(sealedError(() => sealer.open(replaceSegment(a, segment, segmentBytes(a2, segment)), "origin_A")).reason).toBe("unauthentic");
    }
  });

  it("refuses a truncated or extended tag, including a truncated tag that is a valid prefix", () => {
    const { sealed } = FIXED[2]!;
    const tag = segmentBytes(sealed, "tag");
    for (let length = 0; length < 16; length++) {
      expect(sealedError(() => sealer.open(replaceSegment(sealed, "tag", tag.subarray(0, length)), AAD)).reason).toBe("malformed");
    }
    expect(sealedError(() => sealer.open(replaceSegment(sealed, "tag", Buffer.concat([tag, Buffer.from([0])])), AAD)).reason).toBe("malformed");
    // The tag inside the wrapped data key too (its last 16 of 60 bytes).
    const wrapped = segmentBytes(sealed, "wrappedDek");
    for (const length of [44, 48, 52, 56, 59, 61]) {
      const resized = Buffer.concat([wrapped, Buffer.alloc(8)]).subarray(0, length);
      expect(sealedError(() => sealer.open(replaceSegment(sealed, "wrappedDek", resized), AAD)).reason).toBe("malformed");
    }
    expect(sealedError(() => sealer.open(replaceSegment(sealed, "iv", segmentBytes(sealed, "iv").subarray(0, 8)), AAD)).reason).toBe("malformed");
  });

  it("refuses an unknown key id, and a relabelled id even when both ids hold the same key", () => {
    const { sealed } = FIXED[2]!;
    const relabelled = sealed.replace(/^v1\.k1\./, "v1.k9.");
    expect(sealedError(() => sealer.open(relabelled, AAD)).reason).toBe("unknown-key");
    expect(sealer.keyIdOf(relabelled)).toBe("k9");
    const other = new SecretSealer(parseKeyring(keyEntry("k2").text));
    expect(sealedError(() => other.open(sealed, AAD)).reason).toBe("unknown-key");
    // A different key under the same id: authentication fails.
    const impostor = new SecretSealer(parseKeyring(keyEntry("k1").text));
    expect(sealedError(() => impostor.open(sealed, AAD)).reason).toBe("unauthentic");
    // Same key bytes under two ids: the id is authenticated, so relabelling does not open.
    const twin = new SecretSealer(parseKeyring(`k2:${k1.key.toString("base64")},${k1.text}`));
    expect(twin.open(sealed, AAD)).toBe(FIXED[2]!.plaintext);
    expect(sealedError(() => twin.open(sealed.replace(/^v1\.k1\./, "v1.k2."), AAD)).reason).toBe("unauthentic");
  });

  it("refuses malformed values with SealedSecretError only", () => {
    const { sealed } = FIXED[2]!;
    const parts = sealed.split(".");
    const tagText = parts[5]!;
    // Base64url whose unused low bits are set decodes to the same bytes in Node: refused as non-canonical.
    const lastIndex = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".indexOf(tagText.at(-1)!);
    const nonCanonicalChar = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[lastIndex | 1]!;
    const nonCanonical = [...parts.slice(0, 5), tagText.slice(0, -1) + nonCanonicalChar].join(".");
    expect(Buffer.from(nonCanonical.split(".")[5]!, "base64url").equals(segmentBytes(sealed, "tag"))).toBe(true);
    const malformed: unknown[] = [
      "",
      "v1",
      "v1.k1",
      sealed.replace(/^v1\./, "v2."),
      sealed.replace(/^v1\./, "V1."),
      sealed.replace(/^v1\.k1\./, "v1.K1."),
      sealed.replace(/^v1\.k1\./, "v1.."),
      `${sealed}.`,
      `${sealed}.AAAA`,
      parts.slice(0, 5).join("."),
      ` ${sealed}`,
      `${sealed}\n`,
      [...parts.slice(0, 5), `${tagText}==`].join("."),
      [...parts.slice(0, 5), tagText.replace(/./, "+")].join("."),
      [...parts.slice(0, 4), parts[4]!.padEnd(parts[4]!.length + ((5 - (parts[4]!.length % 4)) % 4), "A"), tagText].join("."), // length ≡ 1 (mod 4)
      nonCanonical,
      null,
      undefined,
      42,
      Buffer.from(sealed),
      { toString: () => sealed },
    ];
    if (nonCanonical === sealed) throw new Error("test setup: expected a non-canonical variant");
    for (const value of malformed) {
      const error = sealedError(() => sealer.open(value as string, AAD));
      expect(error).toBeInstanceOf(SealedSecretError);
      expect(error.reason).toBe("malformed");
      expect(sealedError(() => sealer.keyIdOf(value as string)).reason).toBe("malformed");
      expect(sealedError(() => sealer.rewrap(value as string, AAD)).reason).toBe("malformed");
    }
  });
});
