import type { ChainReader } from "../chain/chain-readers";
import type { BalanceReader, PayingWallet, WalletChain } from "./ports";

/** The engine's balance check before signing: the wallet's USDC on its own chain. */
export class ChainBalanceReader implements BalanceReader {
  constructor(private readonly chains: ReadonlyMap<WalletChain, ChainReader>) {}

  usdcOf(wallet: PayingWallet): Promise<bigint> {
    const reader = this.chains.get(wallet.chain);
    if (!reader) return Promise.reject(new Error(`${wallet.chain} is not offered by this deployment`));
    return reader.usdcOf(wallet.address);
  }
}
