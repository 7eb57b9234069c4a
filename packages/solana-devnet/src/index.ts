import { generateKeyPairSync } from "node:crypto";
import { getAddressDecoder, type Address } from "@solana/kit";
import { SolanaLedger } from "./ledger";
import { createRpcMethods } from "./methods";
import { DEVNET_USDC_DECIMALS, DEVNET_USDC_MINT, SOLANA_DEVNET_GENESIS_HASH, SOLANA_DEVNET_NETWORK } from "./network";
import { serveJsonRpc } from "@c402/json-rpc-server";

export { DEVNET_USDC_DECIMALS, DEVNET_USDC_MINT, SOLANA_DEVNET_GENESIS_HASH, SOLANA_DEVNET_NETWORK } from "./network";

/** A Solana validator produces a block about every 400 ms. */
const DEFAULT_BLOCK_TIME_MS = 400;
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_MAX_BATCH_REQUESTS = 100;

export interface SolanaDevnetOptions {
  /** 0 or unset: the OS picks a free port. */
  port?: number;
  /** A loopback address (default 127.0.0.1); anything else is refused. */
  host?: string;
  /** A new block (slot, block height, blockhash) this often; 0: blocks only through advanceBlocks. Default 400. */
  blockTimeMs?: number;
  /** Request bodies longer than this are refused with 413. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Batches of more requests than this are refused. Default 100. */
  maxBatchRequests?: number;
  /** Told of the devnet's own failures (answered as -32603); quiet when unset. */
  onInternalError?: (method: string, err: unknown) => void;
}

export interface SolanaDevnet {
  /** The JSON-RPC endpoint, e.g. http://127.0.0.1:41234. */
  url: string;
  /** The CAIP-2 network id: Solana devnet's. */
  network: typeof SOLANA_DEVNET_NETWORK;
  genesisHash: string;
  /** Devnet USDC, at its real mint address (SPL Token, 6 decimals, no mint authority). */
  usdcMint: Address;
  usdcDecimals: number;
  /** Sets the owner's associated token account balance for a mint (default USDC), creating the account; returns its address. */
  setTokenBalance(owner: Address, amount: bigint, mint?: Address): Promise<Address>;
  /** The owner's associated token account balance for a mint (default USDC); 0 when there is no such account. */
  tokenBalance(owner: Address, mint?: Address): Promise<bigint>;
  /** Sends lamports from the devnet's faucet (a real, confirmed transfer); returns its signature. */
  airdrop(recipient: Address, lamports: bigint): Promise<string>;
  /**
   * A new key pair holding `lamports` (a fee payer for a local run): its
   * secret as solana-keygen writes it (a JSON array of 64 numbers) and its address.
   */
  fundedKeyPair(lamports: bigint): Promise<{ secretKey: string; address: Address }>;
  /** Produces blocks at once: blockhashes older than 150 blocks stop being valid. */
  advanceBlocks(count: number): void;
  /** The current slot and block height. */
  slot(): bigint;
  blockHeight(): bigint;
  close(): Promise<void>;
}

/** A new ed25519 key pair as solana-keygen writes it (a JSON array of the 32-byte seed then the 32-byte public key), and its address (the public key in base58). */
export function newSolanaKeyPair(): { secretKey: string; address: Address } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  // PKCS#8 and SPKI DER of an ed25519 key end with the raw 32 bytes.
  const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  return { secretKey: JSON.stringify([...seed, ...raw]), address: getAddressDecoder().decode(raw) };
}

/**
 * Starts a Solana devnet in this process: litesvm (with SPL Token, Token-2022,
 * Associated Token Account and Memo) behind a JSON-RPC server on loopback,
 * presenting itself as Solana devnet with devnet USDC at its real mint.
 */
export async function startSolanaDevnet(options: SolanaDevnetOptions = {}): Promise<SolanaDevnet> {
  const ledger = await SolanaLedger.create();
  const server = await serveJsonRpc(createRpcMethods(ledger), {
    host: options.host ?? "127.0.0.1",
    port: options.port ?? 0,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxBatchRequests: options.maxBatchRequests ?? DEFAULT_MAX_BATCH_REQUESTS,
    onInternalError: options.onInternalError,
  });
  const blockTimeMs = options.blockTimeMs ?? DEFAULT_BLOCK_TIME_MS;
  const blockTimer = blockTimeMs > 0 ? setInterval(() => ledger.advanceBlocks(1), blockTimeMs) : null;
  // The devnet never keeps a process alive on its own: close() or the end of the process stops it.
  blockTimer?.unref();
  return {
    url: server.url,
    network: SOLANA_DEVNET_NETWORK,
    genesisHash: SOLANA_DEVNET_GENESIS_HASH,
    usdcMint: DEVNET_USDC_MINT,
    usdcDecimals: DEVNET_USDC_DECIMALS,
    setTokenBalance: (owner, amount, mint = DEVNET_USDC_MINT) => ledger.setTokenAccount(owner, mint, { amount }),
    tokenBalance: (owner, mint = DEVNET_USDC_MINT) => ledger.tokenBalance(owner, mint),
    airdrop: (recipient, lamports) => ledger.airdrop(recipient, lamports),
    fundedKeyPair: async (lamports) => {
      const { secretKey, address } = newSolanaKeyPair();
      await ledger.airdrop(address, lamports);
      return { secretKey, address };
    },
    advanceBlocks: (count) => ledger.advanceBlocks(count),
    slot: () => ledger.currentSlot,
    blockHeight: () => ledger.blockHeight,
    close: async () => {
      if (blockTimer) clearInterval(blockTimer);
      await server.close();
    },
  };
}
