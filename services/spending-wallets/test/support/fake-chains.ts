import type { ChainReader } from "../../src/chain/chain-readers";

/** A chain whose balances the test sets (the JSON-RPC readers are exercised against the devchain elsewhere). */
export function fakeChain(chain: "base" | "solana"): ChainReader & { usdc_: Map<string, bigint>; down: boolean } {
  const balances = new Map<string, bigint>();
  const reader = {
    chain,
    network: chain === "base" ? "eip155:84532" : "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
    usdc: chain === "base" ? "0x036CbD53842c5426634e7929541eC2318f3dCF7e" : "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
    nativeSymbol: chain === "base" ? "ETH" : "SOL",
    ...(chain === "base" ? { chainId: 84532 } : {}),
    usdc_: balances,
    down: false,
    async usdcOf(address: string) {
      if (reader.down) throw new Error("rpc down");
      return balances.get(address) ?? 0n;
    },
    async nativeOf() {
      if (reader.down) throw new Error("rpc down");
      return 7n;
    },
    async ping() {
      if (reader.down) throw new Error("rpc down");
    },
  };
  return reader;
}
