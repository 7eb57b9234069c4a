import { parseKeyring, SecretSealer } from "../src";
import { flipBit, keyEntry, segmentBytes, sealedError } from "./helpers";

describe("master key rotation", () => {
  const k1 = keyEntry("k1");
  const k2 = keyEntry("k2");
  const old = new SecretSealer(parseKeyring(k1.text));
  const rotating = new SecretSealer(parseKeyring(`${k2.text},${k1.text}`));
  const retired = new SecretSealer(parseKeyring(k2.text));
  const AAD = "origin_01J9Z8ZP3N6Q7R8S9T0V1W2X3Y";

  it("seals with the first key of the keyring and opens with any of them", () => {
    const underK1 = old.seal("sk_live_old", AAD);
    expect(old.keyIdOf(underK1)).toBe("k1");
    expect(rotating.currentKeyId).toBe("k2");
    expect(rotating.keyIds).toEqual(["k2", "k1"]);
    expect(rotating.open(underK1, AAD)).toBe("sk_live_old");
    const underK2 = rotating.seal("sk_live_new", AAD);
    expect(rotating.keyIdOf(underK2)).toBe("k2");
    expect(retired.open(underK2, AAD)).toBe("sk_live_new");
  });

  it("rewraps a k1 value to k2 without touching the data layer; a k2-only keyring then opens it, not the old one", () => {
    const underK1 = old.seal("sk_live_rotate_me", AAD);
    const underK2 = rotating.rewrap(underK1, AAD);
    expect(rotating.keyIdOf(underK2)).toBe("k2");
    expect(rotating.open(underK2, AAD)).toBe("sk_live_rotate_me");
    expect(retired.open(underK2, AAD)).toBe("sk_live_rotate_me");
    // The DEK is re-wrapped (fresh wrap IV); the data layer stays as it was.
    for (const segment of ["iv", "ct", "tag"] as const) expect(segmentBytes(underK2, segment).equals(segmentBytes(underK1, segment))).toBe(true);
    expect(segmentBytes(underK2, "wrappedDek").equals(segmentBytes(underK1, "wrappedDek"))).toBe(false);
    // Once k1 is retired, values still under k1 do not open; k1 alone cannot open the rewrapped one.
    expect(sealedError(() => retired.open(underK1, AAD)).reason).toBe("unknown-key");
    expect(sealedError(() => old.open(underK2, AAD)).reason).toBe("unknown-key");
    // A rewrapped value stays bound to its resource.
    expect(sealedError(() => rotating.open(underK2, "origin_other")).reason).toBe("unauthentic");
  });

  it("returns a value already under the current key unchanged, after checking it", () => {
    const underK2 = rotating.seal("sk_live_current", AAD);
    expect(rotating.rewrap(underK2, AAD)).toBe(underK2);
    expect(sealedError(() => rotating.rewrap(underK2, "origin_other")).reason).toBe("unauthentic");
  });

  it("refuses to rewrap a tampered value (data layer included), a wrong AAD or an unknown key", () => {
    const underK1 = old.seal("sk_live_rotate_me", AAD);
    for (const segment of ["wrappedDek", "iv", "ct", "tag"] as const) {
      expect(sealedError(() => rotating.rewrap(flipBit(underK1, segment, 5), AAD)).reason).toBe("unauthentic");
    }
    expect(sealedError(() => rotating.rewrap(underK1, "origin_other")).reason).toBe("unauthentic");
    expect(sealedError(() => retired.rewrap(underK1, AAD)).reason).toBe("unknown-key");
  });

  it("rewraps across several generations (k1 → k2 → k3)", () => {
    const k3 = keyEntry("k3");
    const third = new SecretSealer(parseKeyring(`${k3.text},${k2.text}`));
    const underK3 = third.rewrap(rotating.rewrap(old.seal("generations", AAD), AAD), AAD);
    expect(third.keyIdOf(underK3)).toBe("k3");
    expect(new SecretSealer(parseKeyring(k3.text)).open(underK3, AAD)).toBe("generations");
  });
});
