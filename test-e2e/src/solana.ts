import {
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getProgramDerivedAddress,
  getTransactionDecoder,
  partiallySignTransaction,
  type Address,
  type KeyPairSigner,
} from "@solana/kit";
import { call } from "./http";

/** The devnet's CAIP-2 id and its USDC mint (packages/solana-devnet: it presents itself as Solana devnet). */
export const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
export const DEVNET_USDC = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" as Address;
const ATA_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL" as Address;

/** The local Solana devnet of the running service (from `/health?deep=true`), over its JSON-RPC and cheats. */
export interface SolanaDevnetClient {
  url: string;
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Writes the owner's USDC token account (creating it) holding `amount`. */
  setUsdc(owner: string, amount: bigint): Promise<void>;
  /** The owner's USDC balance (its associated token account's), in atomic units; 0 when the account does not exist. */
  usdc(owner: string): Promise<bigint>;
  /** Produces `count` blocks at once (blockhashes age without waiting). */
  advanceBlocks(count: number): Promise<void>;
}

export async function associatedUsdcAccount(owner: string): Promise<string> {
  const enc = getAddressEncoder();
  const [ata] = await getProgramDerivedAddress({
    programAddress: ATA_PROGRAM,
    seeds: [enc.encode(owner as Address), enc.encode(TOKEN_PROGRAM), enc.encode(DEVNET_USDC as Address)],
  });
  return ata;
}

/**
 * Whether the target settles on Solana: off only when an embedded target is
 * started with SOLANA_ENABLED=false (the distributed runner always starts its devnet).
 */
export const SOLANA_ENABLED = process.env.SOLANA_ENABLED !== "false";

/**
 * Creates the owners' USDC accounts (empty) where the target settles on
 * Solana: a Solana payout wallet needs one before a checkout takes it.
 */
export async function createUsdcAccounts(...owners: string[]): Promise<void> {
  if (!SOLANA_ENABLED) return;
  const devnet = await solanaDevnet();
  for (const owner of owners) await devnet.setUsdc(owner, 0n);
}

export async function solanaDevnet(): Promise<SolanaDevnetClient> {
  const health = await call("GET", "/health?deep=true");
  const url = health.body.solana_devnet?.url as string | undefined;
  if (!url) throw new Error(`the target names no Solana devnet in /health?deep=true: ${health.text}`);
  let id = 0;
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
    });
    const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
    if (body.error) throw Object.assign(new Error(`${method}: ${body.error.message}`), { code: body.error.code });
    return body.result as T;
  };
  return {
    url,
    rpc,
    async setUsdc(owner, amount) {
      await rpc("surfnet_setTokenAccount", [owner, DEVNET_USDC, { amount: amount.toString() }]);
    },
    async usdc(owner) {
      try {
        const r = await rpc<{ value: { amount: string } }>("getTokenAccountBalance", [await associatedUsdcAccount(owner)]);
        return BigInt(r.value.amount);
      } catch (err) {
        if ((err as { code?: number }).code === -32602) return 0n;
        throw err;
      }
    },
    async advanceBlocks(count) {
      await rpc("surfnet_advanceBlocks", [count]);
    },
  };
}

/** A transaction the service prepared (POST …/prepare, base64), signed by the buyer's wallet in its own slot, as signTransaction does. */
export async function signPrepared(transaction: string, buyer: KeyPairSigner): Promise<string> {
  const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
  return getBase64EncodedWireTransaction(await partiallySignTransaction([buyer.keyPair], decoded as Parameters<typeof partiallySignTransaction>[1]));
}
