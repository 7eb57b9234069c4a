import { env } from "@c402/config";

/**
 * The service's own settings. SPENDING_WALLETS_KEYRING seals the wallets' keys
 * (a keyring of its own, never another service's). The chains are the ones the
 * wallets live on: EVM_* for `base`, SOLANA_* for `solana` (unset: that chain
 * offers no wallet).
 */
export const spendingWalletsConfigSpec = {
  keyring: env.string(
    "SPENDING_WALLETS_KEYRING",
    "master keys that seal spending wallets' keys (id:base64 of 32 bytes, comma-separated; the first seals, all open; the re-wrap sweep moves every wallet to the first)",
    { secret: true },
  ),
  evmNetwork: env.optionalString("EVM_NETWORK", "CAIP-2 id of the EVM network the `base` wallets live on, e.g. eip155:8453 (unset: no `base` wallets)"),
  evmRpcUrl: env.optionalString("EVM_RPC_URL", "JSON-RPC URL of that EVM network (balances)", { secret: true }),
  solanaEnabled: env.bool("SOLANA_ENABLED", "offer `solana` wallets (the spec's exposure switch)", { default: false }),
  solanaNetwork: env.optionalString("SOLANA_NETWORK", "CAIP-2 id of the Solana network the `solana` wallets live on"),
  solanaRpcUrl: env.optionalString("SOLANA_RPC_URL", "JSON-RPC URL of that Solana network (balances)", { secret: true }),
  solanaUsdcMint: env.optionalString("SOLANA_USDC_MINT", "USDC mint on that Solana network (default: the network's canonical USDC)"),
};
