import { inspect } from "node:util";
import { KeyringError, parseKeyring, SealedSecretError, SecretSealer } from "../src";
import { flipBit, keyEntry, keyForms, sealedError } from "./helpers";

describe("no key material or plaintext in logs and errors", () => {
  const k1 = keyEntry("k1");
  const k2 = keyEntry("k2");
  const keyring = parseKeyring(`${k2.text},${k1.text}`);
  const sealer = new SecretSealer(keyring);
  const forms = [...keyForms(k1.key), ...keyForms(k2.key)];
  const PLAINTEXT = "sk_live_CANARY_4f1d2c9e8b7a6";
  const AAD = "origin_01J9Z8ZP3N6Q7R8S9T0V1W2X3Y";

  function expectClean(text: string): void {
    for (const form of forms) expect(text).not.toContain(form);
    expect(text).not.toContain(PLAINTEXT);
  }

  it("renders the keyring and the sealer with key ids only (JSON, inspect, console, string)", () => {
    expect(JSON.parse(JSON.stringify(sealer))).toEqual({ currentKeyId: "k2", keyIds: ["k2", "k1"] });
    expect(JSON.parse(JSON.stringify({ keyring }))).toEqual({ keyring: { currentId: "k2", ids: ["k2", "k1"] } });
    expect(inspect(sealer)).toBe("SecretSealer(current=k2, ids=k2,k1)");
    expect(inspect(keyring)).toBe("Keyring(current=k2, ids=k2,k1)");
    const renderings = [
      JSON.stringify(sealer),
      JSON.stringify(keyring),
      JSON.stringify({ deps: { sealer, keyring } }),
      inspect(sealer, { showHidden: true, depth: Infinity }),
      inspect(keyring, { showHidden: true, depth: Infinity }),
      inspect({ deps: { sealer, keyring } }, { showHidden: true, depth: Infinity, customInspect: true }),
      String(sealer),
      `${keyring}`,
      Object.keys(sealer).join(","),
      Object.getOwnPropertyNames(keyring).join(","),
      JSON.stringify(Object.getOwnPropertyDescriptors(keyring)),
    ];
    for (const text of renderings) expectClean(text);
  });

  it("keeps key material out of a raw inspection too (no property holds it)", () => {
    // customInspect: false shows the object's own properties: ids only, the keys are in a module WeakMap.
    expectClean(inspect(keyring, { showHidden: true, depth: Infinity, customInspect: false }));
    expectClean(inspect(sealer, { showHidden: true, depth: Infinity, customInspect: false }));
  });

  it("puts neither keys nor plaintext nor the sealed value in SealedSecretError (message, stack, JSON, inspect)", () => {
    const sealed = sealer.seal(PLAINTEXT, AAD);
    const errors = [
      sealedError(() => sealer.open(sealed, "origin_other")),
      sealedError(() => sealer.open(flipBit(sealed, "ct", 3), AAD)),
      sealedError(() => sealer.open(flipBit(sealed, "wrappedDek", 100), AAD)),
      sealedError(() => sealer.open(sealed.replace(/^v1\.k2\./, "v1.k7."), AAD)),
      sealedError(() => sealer.open(sealed.slice(0, -3), AAD)),
      sealedError(() => sealer.rewrap(sealed, "origin_other")),
      sealedError(() => sealer.seal(`${PLAINTEXT}\uD800`, AAD)),
      sealedError(() => new SecretSealer(parseKeyring(k1.text)).open(sealed, AAD)),
    ];
    const segments = sealed.split(".").filter((s) => s.length >= 16);
    for (const error of errors) {
      expect(error).toBeInstanceOf(SealedSecretError);
      expect(error.cause).toBeUndefined();
      for (const text of [error.message, error.stack ?? "", JSON.stringify(error), inspect(error, { showHidden: true, depth: Infinity })]) {
        expectClean(text);
        expect(text).not.toContain(AAD);
        for (const segment of segments) expect(text).not.toContain(segment);
      }
    }
  });

  it("puts no key material in KeyringError", () => {
    const error = (() => {
      try {
        parseKeyring(`${k1.text},${k1.text}`);
      } catch (e) {
        return e as KeyringError;
      }
      throw new Error("expected a KeyringError");
    })();
    expect(error).toBeInstanceOf(KeyringError);
    for (const text of [error.message, error.stack ?? "", JSON.stringify(error), inspect(error)]) expectClean(text);
  });
});
