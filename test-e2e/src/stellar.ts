import { readFileSync } from "node:fs";
import { callStandin, refuseStellarOrgLookups, trustCertificateInThisProcess } from "@c402/stellar-standin";
import { call } from "./http";

/** The stand-in presents itself as Stellar testnet, with Circle's testnet USDC at its real id (packages/stellar-standin). */
export const STELLAR_TESTNET = "stellar:testnet";
export const TESTNET_USDC = "CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA";

/**
 * Whether the target settles on Stellar: off only when an embedded target is
 * started with STELLAR_ENABLED=false (the distributed runner always starts its stand-in).
 */
export const STELLAR_ENABLED = process.env.STELLAR_ENABLED !== "false";

/** The running service's Soroban RPC stand-in (from `/health?deep=true`), over its JSON-RPC and its cheats. */
export interface StellarStandinClient {
  url: string;
  rpc<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  /** Creates the account (10,000 XLM) and its USDC trustline holding `amount` (7 decimals). */
  fundWithUsdc(account: string, amount: bigint): Promise<void>;
  /** The holder's USDC balance in 7-decimal units (0 without a trustline). */
  usdc(holder: string): Promise<bigint>;
  /** Every USDC transfer the stand-in's ledger has made. */
  transfers(): Promise<{ hash: string; from: string; to: string; amount: bigint }[]>;
}

let ready: Promise<StellarStandinClient> | undefined;

/**
 * The stand-in of the target, its certificate authority trusted in this
 * process (the official client refuses plain http, and the stand-in's
 * certificate is issued by a test authority), and stellar.org lookups refused
 * (the official client asks Horizon how long ledgers take and falls back to 5 s).
 */
export function stellarStandin(): Promise<StellarStandinClient> {
  ready ??= connect();
  return ready;
}

async function connect(): Promise<StellarStandinClient> {
  const health = await call("GET", "/health?deep=true");
  const standin = health.body.stellar_standin as { url?: string; ca_file?: string } | undefined;
  if (!standin?.url || !standin.ca_file) throw new Error(`the target names no Stellar stand-in in /health?deep=true: ${health.text}`);
  const ca = readFileSync(standin.ca_file, "utf8");
  trustCertificateInThisProcess(ca);
  refuseStellarOrgLookups();
  const url = standin.url;
  const rpc = <T>(method: string, params: Record<string, unknown> = {}): Promise<T> => callStandin<T>(url, ca, method, params);
  return {
    url,
    rpc,
    async fundWithUsdc(account, amount) {
      await rpc("standin_fundAccount", { accountId: account, stroops: "100000000000" });
      await rpc("standin_mintUsdc", { address: account, amount: amount.toString() });
    },
    async usdc(holder) {
      return BigInt((await rpc<{ balance: string }>("standin_usdcBalance", { address: holder })).balance);
    },
    async transfers() {
      const { transfers } = await rpc<{ transfers: { hash: string; from: string; to: string; amount: string }[] }>("standin_transfers");
      return transfers.map((t) => ({ ...t, amount: BigInt(t.amount) }));
    },
  };
}
