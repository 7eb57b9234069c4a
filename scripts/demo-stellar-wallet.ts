import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { Keypair } from "@stellar/stellar-base";
import { callStandin } from "@c402/stellar-standin";

/**
 * A demo Stellar keypair kept in a file (mode 0600) as `{"publicKey": "G…", "secret": "S…"}`,
 * created on first use. For local demos only.
 */
export function demoStellarWallet(file: string): Keypair {
  if (existsSync(file)) return Keypair.fromSecret((JSON.parse(readFileSync(file, "utf8")) as { secret: string }).secret);
  const keypair = Keypair.random();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ publicKey: keypair.publicKey(), secret: keypair.secret() }), { mode: 0o600 });
  return keypair;
}

export const DEMO_BUYER_STELLAR_WALLET = ".data/demo-buyer-stellar-wallet.json";

export interface LocalStellarStandin {
  /** The Soroban JSON-RPC endpoint (https://127.0.0.1:<port>). */
  url: string;
  /** stellar:testnet */
  network: string;
  /** USDC's Stellar Asset Contract id (C…). */
  usdc: string;
  /** The PEM of the test certificate authority that issued the stand-in's certificate. */
  ca: string;
}

/** The Soroban RPC stand-in of the running service (from its /health?deep=true; C402_URL, default http://127.0.0.1:4020). */
export async function localStellarStandin(): Promise<LocalStellarStandin> {
  const res = await fetch(`${process.env.C402_URL ?? "http://127.0.0.1:4020"}/health?deep=true`);
  const body = (await res.json()) as { stellar_standin?: { url: string; network: string; usdc: string; ca_file: string } };
  if (!body.stellar_standin) throw new Error("the running service reports no Stellar stand-in (is it in embedded mode, with STELLAR_ENABLED on?)");
  const { url, network, usdc, ca_file } = body.stellar_standin;
  return { url, network, usdc, ca: readFileSync(ca_file, "utf8") };
}

/** One JSON-RPC call (named params) to the stand-in, over HTTPS trusting its CA. */
export function standinRpc<T = unknown>(standin: LocalStellarStandin, method: string, params: Record<string, unknown> = {}): Promise<T> {
  return callStandin<T>(standin.url, standin.ca, method, params);
}
