import { associatedTokenAddress } from "@c402/svm-chain";
import { createPublicClient, erc20Abi, getAddress, http, type PublicClient } from "viem";
import type { WalletChain } from "../domain/ports";

/** What the service reads of one chain: a wallet's USDC and native coin, and whether the RPC answers. */
export interface ChainReader {
  chain: WalletChain;
  network: string;
  /** The USDC read: the token contract (Base) or mint (Solana). */
  usdc: string;
  nativeSymbol: string;
  /** EIP-155 chain id (Base only: EIP-681 names it). */
  chainId?: number;
  usdcOf(address: string): Promise<bigint>;
  nativeOf(address: string): Promise<bigint>;
  /** Resolves when the RPC answers a trivial read within `timeoutMs`. */
  ping(timeoutMs: number): Promise<void>;
}

export function evmChainReader(o: { network: string; rpcUrl: string; usdc: string; timeoutMs?: number }): ChainReader {
  const chainId = Number(o.network.split(":")[1]);
  const client: PublicClient = createPublicClient({ transport: http(o.rpcUrl, { timeout: o.timeoutMs ?? 10_000, retryCount: 0 }) });
  const usdc = getAddress(o.usdc);
  return {
    chain: "base",
    network: o.network,
    usdc,
    nativeSymbol: "ETH",
    chainId,
    usdcOf: (address) => client.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [getAddress(address)] }),
    nativeOf: (address) => client.getBalance({ address: getAddress(address) }),
    ping: async (timeoutMs) => {
      await withTimeout(client.getChainId(), timeoutMs, "base");
    },
  };
}

/** SPL Token (the classic program): USDC mints live under it. */
const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";

export function solanaChainReader(o: { network: string; rpcUrl: string; usdcMint: string; timeoutMs?: number }): ChainReader {
  const timeoutMs = o.timeoutMs ?? 10_000;
  let nextId = 1;
  const call = async <T>(method: string, params: unknown[], ms = timeoutMs): Promise<T> => {
    const response = await fetch(o.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
      signal: AbortSignal.timeout(ms),
    });
    if (!response.ok) throw new Error(`solana rpc ${method}: HTTP ${response.status}`);
    const body = (await response.json()) as { result?: T; error?: { code: number; message: string } };
    if (body.error) throw new SolanaRpcError(method, body.error.code, body.error.message);
    return body.result as T;
  };
  return {
    chain: "solana",
    network: o.network,
    usdc: o.usdcMint,
    nativeSymbol: "SOL",
    async usdcOf(address) {
      const account = associatedTokenAddress(address, o.usdcMint, TOKEN_PROGRAM);
      try {
        const r = await call<{ value: { amount: string } }>("getTokenAccountBalance", [account, { commitment: "confirmed" }]);
        return BigInt(r.value.amount);
      } catch (err) {
        // No token account yet: the wallet never received USDC.
        if (err instanceof SolanaRpcError && err.code === -32602) return 0n;
        throw err;
      }
    },
    async nativeOf(address) {
      const r = await call<{ value: number }>("getBalance", [address, { commitment: "confirmed" }]);
      return BigInt(r.value);
    },
    ping: async (ms) => {
      await call("getSlot", [], ms);
    },
  };
}

class SolanaRpcError extends Error {
  constructor(
    method: string,
    readonly code: number,
    message: string,
  ) {
    super(`solana rpc ${method}: ${message}`);
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} rpc did not answer within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
