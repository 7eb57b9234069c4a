import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { newSolanaKeyPair } from "@c402/solana-devnet";
import { createKeyPairSignerFromBytes, type KeyPairSigner } from "@solana/kit";

/**
 * A demo Solana wallet kept in a file (mode 0600) as solana-keygen writes one
 * (a JSON array of the 32-byte seed and the 32-byte public key), created on
 * first use. For local demos only.
 */
export async function demoSolanaWallet(file: string): Promise<KeyPairSigner> {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, newSolanaKeyPair().secretKey, { mode: 0o600 });
  }
  return createKeyPairSignerFromBytes(Uint8Array.from(JSON.parse(readFileSync(file, "utf8")) as number[]));
}

export const DEMO_BUYER_SOLANA_WALLET = ".data/demo-buyer-solana-wallet.json";

/** The local Solana devnet of the running service (from its /health?deep=true), or SOLANA_DEVNET_URL. */
export async function localSolanaDevnet(): Promise<{ url: string; usdc: string }> {
  if (process.env.SOLANA_DEVNET_URL) return { url: process.env.SOLANA_DEVNET_URL, usdc: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU" };
  const res = await fetch(`${process.env.C402_URL ?? "http://127.0.0.1:4020"}/health?deep=true`);
  const body = (await res.json()) as { solana_devnet?: { url: string; usdc: string } };
  if (!body.solana_devnet) throw new Error("the running service reports no Solana devnet (is it in embedded mode, with SOLANA_ENABLED on?)");
  return body.solana_devnet;
}
