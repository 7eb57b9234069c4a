import { randomBytes } from "node:crypto";
import { generateKeyringText, Keyring, KeyringError, parseKeyring, SecretSealer } from "../src";
import { keyEntry, keyForms } from "./helpers";

/** The KeyringError `fn` throws. */
function keyringError(fn: () => unknown): KeyringError {
  try {
    fn();
  } catch (error) {
    if (error instanceof KeyringError) return error;
    throw new Error(`expected a KeyringError, got ${String(error)}`);
  }
  throw new Error("expected a KeyringError, but the call succeeded");
}

describe("parseKeyring", () => {
  it("parses one or several keys, first = current, ignoring surrounding whitespace", () => {
    const a = keyEntry("k1");
    const b = keyEntry("2024-06_b");
    const keyring = parseKeyring(`  ${b.text} ,\n ${a.text}\n`);
    expect(keyring.currentId).toBe("2024-06_b");
    expect(keyring.ids).toEqual(["2024-06_b", "k1"]);
    expect(keyring.has("k1")).toBe(true);
    expect(keyring.has("k2")).toBe(false);
    expect(parseKeyring(a.text).ids).toEqual(["k1"]);
    const maxId = "a".repeat(32);
    expect(parseKeyring(`${maxId}:${randomBytes(32).toString("base64")}`).currentId).toBe(maxId);
  });

  it("refuses bad configurations with a clear message that never contains key material", () => {
    const good = randomBytes(32).toString("base64");
    const short = randomBytes(31).toString("base64");
    const long = randomBytes(33).toString("base64");
    const cases: [string, RegExp][] = [
      ["", /empty/],
      ["   \n", /empty/],
      [good, /not of the form id:base64key/],
      [`k1:${good},`, /entry 2 is empty/],
      [`,k1:${good}`, /entry 1 is empty/],
      [`k1:${good},,k2:${good}`, /entry 2 is empty/],
      ["k1:", /key "k1" is empty/],
      [`:${good}`, /entry 1: key id must match/],
      [`K1:${good}`, /entry 1: key id must match/],
      [`k.1:${good}`, /entry 1: key id must match/],
      [`k 1:${good}`, /entry 1: key id must match/],
      [`${"a".repeat(33)}:${good}`, /entry 1: key id must match/],
      [`${good}:k1`, /entry 1: key id must match/],
      [`k1:${good},k1:${randomBytes(32).toString("base64")}`, /key id "k1" appears more than once/],
      [`k1:${short}`, /key "k1" must be exactly 32 bytes after base64 decoding \(got 31\)/],
      [`k1:${long}`, /key "k1" must be exactly 32 bytes after base64 decoding \(got 33\)/],
      [`k1:${randomBytes(16).toString("base64")}`, /got 16/],
      [`k1:${good.slice(0, -1)}`, /not valid padded base64/],
      [`k1:${good.replace(/=$/, "")}`, /not valid padded base64/],
      [`k1:${randomBytes(32).toString("base64url").replace(/=*$/, "")}_-`, /not valid padded base64/],
      [`k1:${good.slice(0, 20)} ${good.slice(20)}`, /not valid padded base64/],
      [`k1:${good.slice(0, 20)}!${good.slice(21)}`, /not valid padded base64/],
      [`k1:${good}:extra`, /not valid padded base64/],
      [`k1:${Buffer.alloc(32).toString("base64")}`, /all zero bytes/],
    ];
    for (const [text, message] of cases) {
      const error = keyringError(() => parseKeyring(text));
      expect(error.message).toMatch(message);
      expect(error.message).toMatch(/^keyring: /);
      // No base64 run from the input (key material) appears in the message.
      for (const chunk of text.split(/[,:\s]/)) if (chunk.length >= 12) expect(error.message).not.toContain(chunk.slice(0, 12));
    }
    expect(keyringError(() => parseKeyring(undefined as unknown as string)).message).toMatch(/empty/);
  });

  it("refuses bad entries in the Keyring constructor too", () => {
    expect(keyringError(() => new Keyring([])).message).toMatch(/at least one key/);
    expect(keyringError(() => new Keyring([{ id: "k1", key: new Uint8Array(31) }])).message).toMatch(/exactly 32 bytes \(got 31 bytes\)/);
    expect(keyringError(() => new Keyring([{ id: "k1", key: "x".repeat(32) as unknown as Uint8Array }])).message).toMatch(/got no bytes/);
    expect(keyringError(() => new SecretSealer({ currentId: "k1", ids: ["k1"] } as unknown as Keyring)).message).toMatch(/needs a Keyring/);
  });

  it("copies the key bytes: zeroing the caller's buffer afterwards does not change the keyring", () => {
    const key = randomBytes(32);
    const sealer = new SecretSealer(new Keyring([{ id: "k1", key }]));
    const sealed = sealer.seal("secret", "origin_1");
    const copy = Buffer.from(key);
    key.fill(0);
    expect(sealer.open(sealed, "origin_1")).toBe("secret");
    expect(new SecretSealer(new Keyring([{ id: "k1", key: copy }])).open(sealed, "origin_1")).toBe("secret");
  });
});

describe("generateKeyringText", () => {
  it("returns a fresh one-key keyring that parses, under k1 or the given id", () => {
    const text = generateKeyringText();
    expect(text).toMatch(/^k1:[A-Za-z0-9+/]{43}=$/);
    expect(parseKeyring(text).ids).toEqual(["k1"]);
    expect(generateKeyringText()).not.toBe(text);
    expect(parseKeyring(generateKeyringText("2025_q3")).currentId).toBe("2025_q3");
    const sealer = new SecretSealer(parseKeyring(text));
    expect(sealer.open(sealer.seal("secret", "origin_1"), "origin_1")).toBe("secret");
  });

  it("refuses an invalid id", () => {
    expect(keyringError(() => generateKeyringText("Bad.Id")).message).toMatch(/key id must match/);
    expect(keyringError(() => generateKeyringText("")).message).toMatch(/key id must match/);
  });

  it("is never all zeros and never repeats across 1,000 generations", () => {
    const keys = new Set<string>();
    for (let i = 0; i < 1_000; i++) keys.add(generateKeyringText().slice(3));
    expect(keys.size).toBe(1_000);
    for (const key of keys) expect(keyForms(Buffer.alloc(32))).not.toContain(key);
  });
});
