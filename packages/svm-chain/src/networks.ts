/** CAIP-2 ids of the Solana clusters (the genesis hash, truncated), as x402 names them. */
export const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
export const SOLANA_MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

/** USDC mint per network: Circle's devnet USDC and mainnet USDC, both SPL Token mints with 6 decimals. */
export const SOLANA_USDC: Readonly<Record<string, string>> = Object.freeze({
  [SOLANA_DEVNET]: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
  [SOLANA_MAINNET]: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
});

export const USDC_DECIMALS = 6;
