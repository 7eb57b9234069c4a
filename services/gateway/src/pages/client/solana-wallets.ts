import type { PageNetwork } from "../page-data";
import type { WalletFound } from "./wallets";

/** Solana wallets found with the Wallet Standard: one entry per wallet that can sign a transaction on a Solana network the face offers. */
export function discoverSolanaWallets(_networks: readonly PageNetwork[], _found: WalletFound): void {}
