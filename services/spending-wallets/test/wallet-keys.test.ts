import { getBase58Encoder } from "@solana/kit";
import { privateKeyToAddress } from "viem/accounts";
import { DERIVATION_PATHS, ed25519PublicKey, generateWallet, secretKeyBytes, slip10Ed25519, walletFromPhrase } from "../src/domain/wallet-keys";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describe("wallet keys", () => {
  // SLIP-0010, "Test vector 1 for ed25519" (seed 000102030405060708090a0b0c0d0e0f); the public key without its 00 prefix.
  const SEED_1 = Buffer.from("000102030405060708090a0b0c0d0e0f", "hex");
  const VECTOR_1 = [
    [
      "m",
      "90046a93de5380a72b5e45010748567d5ea02bbf6522f979e05c0d8d8ca9fffb",
      "2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7",
      "a4b2856bfec510abab89753fac1ac0e1112364e7d250545963f135f2a33188ed",
    ],
    [
      "m/0'",
      "8b59aa11380b624e81507a27fedda59fea6d0b779a778918a2fd3590e16e9c69",
      "68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3",
      "8c8a13df77a28f3445213a0f432fde644acaa215fc72dcdf300d5efaa85d350c",
    ],
    [
      "m/0'/1'",
      "a320425f77d1b5c2505a6b1b27382b37368ee640e3557c315416801243552f14",
      "b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2",
      "1932a5270f335bed617d5b935c80aedb1a35bd9fc1e31acafd5372c30f5c1187",
    ],
  ] as const;

  it.each(VECTOR_1)("SLIP-0010 ed25519 test vector 1 at %s", (path, chainCode, privateKey, publicKey) => {
    const derived = slip10Ed25519(SEED_1, path);
    expect(hex(derived.chainCode)).toBe(chainCode);
    expect(hex(derived.key)).toBe(privateKey);
    expect(hex(ed25519PublicKey(derived.key))).toBe(publicKey);
  });

  it("refuses a non-hardened step (ed25519 has none)", () => {
    expect(() => slip10Ed25519(SEED_1, "m/0")).toThrow(/hardened/);
  });

  // The well-known development phrase: MetaMask's and Phantom's first accounts under it.
  const DEV_PHRASE = "test test test test test test test test test test test junk";

  it("derives Base's key at m/44'/60'/0'/0/0 (MetaMask's first account), checksummed", () => {
    const w = walletFromPhrase("base", DEV_PHRASE);
    expect(w.address).toBe("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
    expect(w.secret.private_key).toBe("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
    expect(w.secret.derivation_path).toBe(DERIVATION_PATHS.base);
  });

  it("derives Solana's key at m/44'/501'/0'/0' (Phantom's and Solflare's first account): a 64-byte secret key ending with the address", () => {
    const w = walletFromPhrase("solana", DEV_PHRASE);
    expect(w.address).toBe("oeYf6KAJkLYhBuR8CiGc6L4D4Xtfepr85fuDgA9kq96");
    const secretKey = secretKeyBytes("solana", w.secret);
    expect(secretKey).toHaveLength(64);
    expect(hex(secretKey.subarray(32))).toBe(hex(Uint8Array.from(getBase58Encoder().encode(w.address))));
    expect(w.secret.derivation_path).toBe("m/44'/501'/0'/0'");
  });

  it("generates a fresh 12-word phrase per wallet, and the key matches the address", () => {
    const a = generateWallet("base");
    const b = generateWallet("base");
    expect(a.secret.phrase.split(" ")).toHaveLength(12);
    expect(a.secret.phrase).not.toBe(b.secret.phrase);
    expect(privateKeyToAddress(a.secret.private_key as `0x${string}`)).toBe(a.address);
    expect(walletFromPhrase("base", a.secret.phrase).address).toBe(a.address);
    const s = generateWallet("solana");
    expect(walletFromPhrase("solana", s.secret.phrase).address).toBe(s.address);
  });
});
