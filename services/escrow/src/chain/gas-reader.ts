import { jsonRpcTransport } from "@c402/evm-chain";
import { createPublicClient, type Address } from "viem";

/** What arbiter readiness reads of the live EVM network: a wallet's native balance and the gas price, both in wei. */
export interface GasReader {
  /** CAIP-2 id of the network read. */
  readonly network: string;
  balanceOf(address: string): Promise<bigint>;
  gasPrice(): Promise<bigint>;
}

/** The live EVM network (EVM_NETWORK, EVM_RPC_URL) read over JSON-RPC; a call that takes longer than `timeoutMs` fails. */
export function jsonRpcGasReader(network: string, rpcUrl: string, timeoutMs = 5_000): GasReader {
  const client = createPublicClient({ transport: jsonRpcTransport(rpcUrl, { timeoutMs, maxSockets: 4 }) });
  return {
    network,
    balanceOf: (address) => client.getBalance({ address: address as Address }),
    gasPrice: () => client.getGasPrice(),
  };
}
