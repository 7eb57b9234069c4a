import { jsonRpcTransport } from "@c402/evm-chain";
import { createPublicClient } from "viem";

/**
 * The clock a live series is charged by: the latest block's time, the clock
 * the token itself checks a held authorization's window against (a devchain
 * moved forward moves its series with it; ADR 20).
 */
export interface ChainClock {
  /** CAIP-2 id of the network read. */
  readonly network: string;
  now(): Promise<Date>;
}

/** The live EVM network (EVM_NETWORK, EVM_RPC_URL) read over JSON-RPC; a read that takes longer than `timeoutMs` fails. */
export function jsonRpcChainClock(network: string, rpcUrl: string, timeoutMs = 5_000): ChainClock {
  const client = createPublicClient({ transport: jsonRpcTransport(rpcUrl, { timeoutMs, maxSockets: 2 }) });
  return {
    network,
    async now() {
      const block = await client.getBlock({ blockTag: "latest" });
      return new Date(Number(block.timestamp) * 1_000);
    },
  };
}
