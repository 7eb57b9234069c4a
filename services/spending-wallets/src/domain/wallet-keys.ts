import { getBase58Decoder, getBase58Encoder } from "@solana/kit";
import { generateMnemonic, mnemonicToSeedSync, validateMnemonic } from "@scure/bip39";
import { wordlist as english } from "@scure/bip39/wordlists/english";
import { createHmac, createPrivateKey, createPublicKey } from "node:crypto";
import { bytesToHex } from "viem";
import { HDKey, privateKeyToAddress } from "viem/accounts";
import type { WalletChain } from "./ports";

/** Where each chain's key sits under the phrase: MetaMask's first account; Phantom's and Solflare's first Solana account. */
export const DERIVATION_PATHS: Readonly<Record<WalletChain, string>> = Object.freeze({
  base: "m/44'/60'/0'/0/0",
  solana: "m/44'/501'/0'/0'",
});

/** What a wallet's owner gets at creation and at a reveal (and what is sealed at rest). */
export interface WalletSecret {
  phrase: string;
  /** 0x hex (Base); base58 of the 64-byte secret key (Solana). */
  private_key: string;
  derivation_path: string;
}

export interface GeneratedWallet {
  address: string;
  secret: WalletSecret;
}

/** A fresh 12-word BIP-39 phrase and the chain's key and address under it. */
export function generateWallet(chain: WalletChain): GeneratedWallet {
  return walletFromPhrase(chain, generateMnemonic(english, 128));
}

/** The chain's key and address under a phrase (no passphrase, as wallet apps import it). */
export function walletFromPhrase(chain: WalletChain, phrase: string): GeneratedWallet {
  if (!validateMnemonic(phrase, english)) throw new RangeError("not a BIP-39 english phrase");
  const seed = mnemonicToSeedSync(phrase);
  try {
    const path = DERIVATION_PATHS[chain];
    if (chain === "base") {
      const key = HDKey.fromMasterSeed(seed).derive(path).privateKey;
      if (!key) throw new Error("derivation gave no private key");
      const hex = bytesToHex(key);
      key.fill(0);
      return { address: privateKeyToAddress(hex), secret: { phrase, private_key: hex, derivation_path: path } };
    }
    const { key } = slip10Ed25519(seed, path);
    const publicKey = ed25519PublicKey(key);
    const secretKey = new Uint8Array(64);
    secretKey.set(key, 0);
    secretKey.set(publicKey, 32);
    key.fill(0);
    const base58 = getBase58Decoder().decode(secretKey);
    secretKey.fill(0);
    return { address: getBase58Decoder().decode(publicKey), secret: { phrase, private_key: base58, derivation_path: path } };
  } finally {
    seed.fill(0);
  }
}

/** The raw key bytes a signer takes: 32 bytes of secp256k1 (Base), the 64-byte ed25519 secret key (Solana). */
export function secretKeyBytes(chain: WalletChain, secret: WalletSecret): Uint8Array {
  if (chain === "base") return Uint8Array.from(Buffer.from(secret.private_key.replace(/^0x/, ""), "hex"));
  return Uint8Array.from(getBase58Encoder().encode(secret.private_key));
}

const HARDENED = 0x80000000;

/**
 * SLIP-0010 derivation for ed25519 (hardened steps only, the only kind the
 * curve has): the private key and chain code at `path` under `seed`.
 */
export function slip10Ed25519(seed: Uint8Array, path: string): { key: Uint8Array; chainCode: Uint8Array } {
  const segments = path.split("/");
  if (segments[0] !== "m") throw new RangeError("a derivation path starts with m");
  let I = createHmac("sha512", "ed25519 seed").update(seed).digest();
  let key = Uint8Array.from(I.subarray(0, 32));
  let chainCode = Uint8Array.from(I.subarray(32));
  I.fill(0);
  for (const segment of segments.slice(1)) {
    const m = /^([0-9]+)'$/.exec(segment);
    if (!m) throw new RangeError("ed25519 derives hardened indexes only (each step ends with ')");
    const index = Number(m[1]);
    if (index >= HARDENED) throw new RangeError("index out of range");
    const data = Buffer.alloc(37);
    data.set(key, 1);
    data.writeUInt32BE(index + HARDENED, 33);
    I = createHmac("sha512", chainCode).update(data).digest();
    data.fill(0);
    key.fill(0);
    key = Uint8Array.from(I.subarray(0, 32));
    chainCode = Uint8Array.from(I.subarray(32));
    I.fill(0);
  }
  return { key, chainCode };
}

/** PKCS#8 prefix of a raw ed25519 private key (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** The ed25519 public key of a 32-byte private key (seed). */
export function ed25519PublicKey(privateKey: Uint8Array): Uint8Array {
  const der = Buffer.concat([ED25519_PKCS8_PREFIX, privateKey]);
  try {
    const spki = createPublicKey(createPrivateKey({ key: der, format: "der", type: "pkcs8" })).export({ format: "der", type: "spki" });
    return Uint8Array.from(spki.subarray(spki.length - 32));
  } finally {
    der.fill(0);
  }
}
