import { base32nopad, base58 } from "@scure/base";
import {
  chainOfFamily,
  CHAIN_FAMILY,
  checkEvmAddress,
  checkPayoutAddress,
  checkSolanaAddress,
  checkStellarAddress,
  checkStellarContractId,
  crc16Xmodem,
  isPayoutChain,
  stellarPublicKey,
  PAYOUT_CHAINS,
  payoutChange,
} from "../src";

// Vitalik's address, in its EIP-55 spelling (the checksum vector everyone uses).
const EVM = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045";
const SOLANA_USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
// Stellar's documentation example account id.
const STELLAR = "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H";
// Circle's USDC contracts on Stellar's public network and testnet (as @x402/stellar 2.9 names them).
const STELLAR_USDC_CONTRACTS = ["CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75", "CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA"];

/** A strkey built the way Stellar does: version byte, key, CRC16-XModem little-endian. */
function strkey(version: number, key: Uint8Array): string {
  const body = Uint8Array.from([version, ...key]);
  const crc = crc16Xmodem(body);
  return base32nopad.encode(Uint8Array.from([...body, crc & 0xff, crc >> 8]));
}

/** The same text with one character swapped for another of its alphabet. */
function mistyped(text: string, at: number, alphabet: string): string {
  const c = text[at]!;
  const other = alphabet[(alphabet.indexOf(c) + 1) % alphabet.length]!;
  return text.slice(0, at) + other + text.slice(at + 1);
}

describe("chain names", () => {
  it("names the spec's families and stores them under their CAIP-2 namespaces", () => {
    expect(PAYOUT_CHAINS).toEqual(["base", "solana", "stellar"]);
    expect(CHAIN_FAMILY).toEqual({ base: "eip155", solana: "solana", stellar: "stellar" });
    expect(chainOfFamily("eip155")).toBe("base");
    expect(chainOfFamily("solana")).toBe("solana");
    expect(chainOfFamily("evm")).toBeUndefined();
    expect(isPayoutChain("stellar")).toBe(true);
    expect(isPayoutChain("eip155")).toBe(false);
  });
});

describe("EVM addresses", () => {
  it("accepts a correct EIP-55 checksum and answers the checksummed spelling for caseless hex", () => {
    expect(checkEvmAddress(EVM)).toEqual({ ok: true, address: EVM });
    expect(checkEvmAddress(EVM.toLowerCase())).toEqual({ ok: true, address: EVM });
    expect(checkEvmAddress(`0x${EVM.slice(2).toUpperCase()}`)).toEqual({ ok: true, address: EVM });
  });

  it("refuses a mixed-case address whose checksum is wrong", () => {
    // One letter's case flipped: still hex, no longer the checksum.
    const flipped = EVM.replace("F", "f");
    expect(flipped).not.toBe(EVM);
    expect(checkEvmAddress(flipped)).toEqual({ ok: false, reason: expect.stringMatching(/EIP-55 checksum/) });
  });

  it.each([
    ["too short", "0x1234"],
    ["no 0x", EVM.slice(2)],
    ["0X prefix", `0X${EVM.slice(2)}`],
    ["not hex", `0x${"g".repeat(40)}`],
    ["a Solana address", SOLANA_USDC_MINT],
  ])("refuses %s", (_, text) => {
    expect(checkEvmAddress(text)).toEqual({ ok: false, reason: expect.stringMatching(/must be an EVM address/) });
  });

  it("refuses the zero address", () => {
    expect(checkEvmAddress(`0x${"0".repeat(40)}`)).toEqual({ ok: false, reason: expect.stringMatching(/zero address/) });
  });
});

describe("Solana addresses", () => {
  it("accepts base58 text that decodes to 32 bytes, as written", () => {
    expect(checkSolanaAddress(SOLANA_USDC_MINT)).toEqual({ ok: true, address: SOLANA_USDC_MINT });
    const key = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
    expect(checkSolanaAddress(base58.encode(key))).toEqual({ ok: true, address: base58.encode(key) });
  });

  it("refuses base58 that decodes to more or fewer than 32 bytes", () => {
    const short = base58.encode(Uint8Array.from({ length: 31 }, () => 0xff));
    // Leading zero bytes are spelled "1" each: 32 of them and a 1 make 33 characters, 33 bytes.
    const long = base58.encode(Uint8Array.from({ length: 33 }, (_, i) => (i === 32 ? 1 : 0)));
    expect(checkSolanaAddress(short)).toEqual({ ok: false, reason: "must decode to a 32-byte public key (this decodes to 31 bytes)" });
    expect(checkSolanaAddress(long)).toEqual({ ok: false, reason: "must decode to a 32-byte public key (this decodes to 33 bytes)" });
  });

  it.each([
    ["characters outside base58 (0, O, I, l)", "0OIl" + SOLANA_USDC_MINT.slice(4)],
    ["an EVM address", EVM],
    ["too short", "abc"],
    ["too long", "2".repeat(45)],
  ])("refuses %s", (_, text) => {
    expect(checkSolanaAddress(text)).toEqual({ ok: false, reason: expect.stringMatching(/base58/) });
  });

  it("refuses the System Program's all-zero key", () => {
    expect(checkSolanaAddress("1".repeat(32))).toEqual({ ok: false, reason: expect.stringMatching(/System Program/) });
  });
});

describe("Stellar addresses", () => {
  it("computes CRC16-XModem (the standard check value of '123456789' is 0x31C3)", () => {
    expect(crc16Xmodem(new TextEncoder().encode("123456789"))).toBe(0x31c3);
  });

  it("accepts a G strkey with a correct checksum", () => {
    expect(checkStellarAddress(STELLAR)).toEqual({ ok: true, address: STELLAR });
    const built = strkey(
      6 << 3,
      Uint8Array.from({ length: 32 }, (_, i) => 255 - i),
    );
    expect(built).toMatch(/^G/);
    expect(checkStellarAddress(built)).toEqual({ ok: true, address: built });
  });

  it("refuses a strkey whose checksum is wrong (one character mistyped)", () => {
    for (const at of [5, 30, 54]) {
      expect(checkStellarAddress(mistyped(STELLAR, at, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))).toEqual({
        ok: false,
        reason: expect.stringMatching(/checksum/),
      });
    }
  });

  it("refuses other strkeys (a secret seed S…, a muxed M…), lowercase, and wrong lengths", () => {
    const seed = strkey(
      18 << 3,
      Uint8Array.from({ length: 32 }, () => 7),
    );
    expect(seed).toMatch(/^S/);
    expect(checkStellarAddress(seed).ok).toBe(false);
    expect(checkStellarAddress(`M${STELLAR.slice(1)}`).ok).toBe(false);
    expect(checkStellarAddress(STELLAR.toLowerCase()).ok).toBe(false);
    expect(checkStellarAddress(STELLAR.slice(0, 55)).ok).toBe(false);
    expect(checkStellarAddress(`${STELLAR}A`).ok).toBe(false);
  });

  it.each([
    ["a muxed account", 12 << 3, 40, /muxed account \(M…\): send the account id \(G…\)/],
    ["a contract", 2 << 3, 32, /contract address \(C…\), not an account/],
    ["a secret seed", 18 << 3, 32, /secret seed \(S…\), which must never be shared/],
  ])("names what %s strkey is instead of an account id", (_, version, length, reason) => {
    const text = strkey(
      version,
      Uint8Array.from({ length }, (_, i) => i + 1),
    );
    expect(checkStellarAddress(text)).toEqual({ ok: false, reason: expect.stringMatching(reason) });
  });

  it("answers the 32-byte ed25519 key an account id stands for, and refuses anything else", () => {
    const key = Uint8Array.from({ length: 32 }, (_, i) => 255 - i);
    expect(stellarPublicKey(strkey(6 << 3, key))).toEqual(key);
    expect(() => stellarPublicKey(mistyped(STELLAR, 30, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))).toThrow(/checksum/);
  });

  it("refuses the all-zero key (its checksum is right: Stellar's documented GAAA…WHF)", () => {
    expect(checkStellarAddress(`G${"A".repeat(52)}WHF`)).toEqual({ ok: false, reason: expect.stringMatching(/all-zero key/) });
  });

  it("reads contract ids (C…) with the same strkey rules, and never an account id as one or the other way round", () => {
    for (const usdc of STELLAR_USDC_CONTRACTS) expect(checkStellarContractId(usdc)).toEqual({ ok: true, address: usdc });
    const built = strkey(
      2 << 3,
      Uint8Array.from({ length: 32 }, (_, i) => i + 1),
    );
    expect(built).toMatch(/^C/);
    expect(checkStellarContractId(built).ok).toBe(true);
    expect(checkStellarContractId(mistyped(built, 20, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))).toEqual({ ok: false, reason: expect.stringMatching(/checksum/) });
    expect(checkStellarContractId(STELLAR)).toEqual({ ok: false, reason: expect.stringMatching(/contract id: C followed/) });
    expect(checkStellarAddress(built).ok).toBe(false);
    // A G… prefix on a contract's bytes: the letter says account, the version byte says contract.
    expect(checkStellarAddress(`G${built.slice(1)}`).ok).toBe(false);
    expect(checkStellarContractId(built.toLowerCase()).ok).toBe(false);
  });
});

describe("checkPayoutAddress", () => {
  it("checks each chain with its own rule", () => {
    expect(checkPayoutAddress("base", EVM.toLowerCase())).toEqual({ ok: true, address: EVM });
    expect(checkPayoutAddress("solana", SOLANA_USDC_MINT).ok).toBe(true);
    expect(checkPayoutAddress("stellar", STELLAR).ok).toBe(true);
    expect(checkPayoutAddress("solana", STELLAR).ok).toBe(false);
    expect(checkPayoutAddress("stellar", SOLANA_USDC_MINT).ok).toBe(false);
  });
});

describe("payoutChange", () => {
  it("names what happened to a chain's standing address", () => {
    expect(payoutChange(null, null)).toBe("none");
    expect(payoutChange("a", "a")).toBe("unchanged");
    expect(payoutChange(null, "a")).toBe("added");
    expect(payoutChange("a", "b")).toBe("replaced");
    expect(payoutChange("a", null)).toBe("removed");
  });
});
