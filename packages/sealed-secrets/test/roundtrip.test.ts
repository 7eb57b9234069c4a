import fc from "fast-check";
import { Keyring, parseKeyring, SecretSealer } from "../src";
import { aadArb, keyEntry, plaintextArb, SEGMENT_NAMES, segmentBytes, sealedError } from "./helpers";

const SEALED_FORM = /^v1\.[a-z0-9_-]{1,32}\.[A-Za-z0-9_-]{80}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{22}$/;

describe("round trip (G23)", () => {
  it("opens 10,000 random plaintexts under 10,000 random master keys, ids and AADs", () => {
    let roundTrips = 0;
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }).filter((key) => key.some((b) => b !== 0)),
        fc.stringMatching(/^[a-z0-9_-]{1,32}$/),
        aadArb,
        plaintextArb,
        (key, id, aad, plaintext) => {
          const sealer = new SecretSealer(new Keyring([{ id, key }]));
          const sealed = sealer.seal(plaintext, aad);
          expect(sealed).toMatch(SEALED_FORM);
          expect(sealer.keyIdOf(sealed)).toBe(id);
          expect(segmentBytes(sealed, "ct").length).toBe(Buffer.byteLength(plaintext, "utf8"));
          expect(sealer.open(sealed, aad)).toBe(plaintext);
          roundTrips++;
        },
      ),
      { numRuns: 10_000 },
    );
    expect(roundTrips).toBe(10_000);
  });

  it("round-trips the edge cases explicitly: empty, unicode, NUL, a few KB", () => {
    const sealer = new SecretSealer(parseKeyring(keyEntry("k1").text));
    const cases = ["", "sk_live_51H8x", "пароль 🔑 密钥 e\u0301", "\0\u0001\u007f", "x".repeat(8192), "🔑".repeat(1000)];
    for (const plaintext of cases) expect(sealer.open(sealer.seal(plaintext, "origin_1"), "origin_1")).toBe(plaintext);
  });

  it("uses a fresh data key and fresh IVs for every seal, so equal plaintexts give unrelated values", () => {
    const sealer = new SecretSealer(parseKeyring(keyEntry("k1").text));
    const a = sealer.seal("same secret", "origin_1");
    const b = sealer.seal("same secret", "origin_1");
    for (const segment of SEGMENT_NAMES) expect(segmentBytes(a, segment).equals(segmentBytes(b, segment))).toBe(false);
  });

  it("refuses to seal without a usable AAD or with a string that is not valid UTF-16", () => {
    const sealer = new SecretSealer(parseKeyring(keyEntry("k1").text));
    expect(sealedError(() => sealer.seal("secret", "")).reason).toBe("invalid-input");
    expect(sealedError(() => sealer.seal("secret", undefined as unknown as string)).reason).toBe("invalid-input");
    expect(sealedError(() => sealer.seal("secret", "id\uD800")).reason).toBe("invalid-input");
    expect(sealedError(() => sealer.seal("a\uDC00b", "origin_1")).reason).toBe("invalid-input");
    expect(sealedError(() => sealer.seal(42 as unknown as string, "origin_1")).reason).toBe("invalid-input");
    expect(sealedError(() => sealer.open(sealer.seal("secret", "origin_1"), "")).reason).toBe("invalid-input");
  });
});
