import { env, type ConfigOf } from "@c402/config";
import { outboundSettingsOf, outboundSettingsSpec, type OutboundSettings } from "@c402/outbound-http";
import type { Keyring } from "@c402/sealed-secrets";
import { EVM_NETWORKS, isEvmNetwork, isSvmNetwork, SVM_NETWORKS } from "@c402/x402";
import type { WalletChain } from "./domain/ports";

/**
 * The service's settings besides its keyring (every one with a default: the
 * embedded runner reads them as they are). The chains are the ones the
 * wallets live on: EVM_* for `base`, SOLANA_* for `solana` (unset: that chain
 * offers no wallet).
 */
export const spendingWalletsSettingsSpec = {
  evmNetwork: env.optionalString("EVM_NETWORK", "CAIP-2 id of the EVM network the `base` wallets live on, e.g. eip155:8453 (unset: no `base` wallets)"),
  evmRpcUrl: env.optionalString("EVM_RPC_URL", "JSON-RPC URL of that EVM network (balances)", { secret: true }),
  evmUsdcAddress: env.optionalString("EVM_USDC_ADDRESS", "USDC contract on that EVM network (default: the canonical USDC of the network)"),
  solanaEnabled: env.bool("SOLANA_ENABLED", "offer `solana` wallets (the spec's exposure switch)", { default: false }),
  solanaNetwork: env.optionalString("SOLANA_NETWORK", "CAIP-2 id of the Solana network the `solana` wallets live on"),
  solanaRpcUrl: env.optionalString("SOLANA_RPC_URL", "JSON-RPC URL of that Solana network (balances)", { secret: true }),
  solanaUsdcMint: env.optionalString("SOLANA_USDC_MINT", "USDC mint on that Solana network (default: the network's canonical USDC)"),
  rewrapIntervalMs: env.int(
    "SPENDING_WALLETS_REWRAP_INTERVAL_MS",
    "pause between two rounds of the sweep that re-wraps wallets sealed under a retired key of SPENDING_WALLETS_KEYRING",
    { default: 60_000, min: 100, max: 3_600_000 },
  ),
  ...outboundSettingsSpec,
};

/** The distributed process's settings: its own, and its keyring. */
export const spendingWalletsConfigSpec = {
  keyring: env.string(
    "SPENDING_WALLETS_KEYRING",
    "master keys that seal spending wallets' keys (id:base64 of 32 bytes, comma-separated; the first seals, all open; the re-wrap sweep moves every wallet to the first)",
    { secret: true },
  ),
  ...spendingWalletsSettingsSpec,
};

/** One chain this deployment offers wallets on. */
export interface WalletNetwork {
  chain: WalletChain;
  /** CAIP-2 id. */
  network: string;
  rpcUrl: string;
  /** USDC's contract (Base) or mint (Solana). */
  usdc: string;
}

/** What the service is built with besides its dependencies. */
export interface SpendingWalletsSettings {
  /** The keys that seal wallets' keys (SPENDING_WALLETS_KEYRING). */
  keyring: Keyring;
  /** The chains offered (none: every wallet call answers unavailable). */
  networks: WalletNetwork[];
  rewrapIntervalMs: number;
  /** Where the pay engine's guarded fetch may go. */
  outbound: OutboundSettings;
}

/** The settings of a configuration: a network named without its RPC URL or USDC stops the start. */
export function spendingWalletsSettingsOf(config: ConfigOf<typeof spendingWalletsSettingsSpec>, keyring: Keyring): SpendingWalletsSettings {
  const networks: WalletNetwork[] = [];
  if (config.evmNetwork) {
    const network = config.evmNetwork;
    if (!/^eip155:[0-9]{1,20}$/.test(network)) throw new Error(`EVM_NETWORK must be an EVM CAIP-2 id (eip155:<chain id>), not ${JSON.stringify(network)}`);
    if (!config.evmRpcUrl) throw new Error("EVM_RPC_URL is required when EVM_NETWORK is set (a wallet's balance is read there)");
    const usdc = config.evmUsdcAddress ?? (isEvmNetwork(network) ? EVM_NETWORKS[network].usdc : undefined);
    if (!usdc) throw new Error(`EVM_NETWORK ${network} has no canonical USDC: set EVM_USDC_ADDRESS`);
    networks.push({ chain: "base", network, rpcUrl: config.evmRpcUrl, usdc });
  }
  if (config.solanaEnabled) {
    const network = config.solanaNetwork;
    if (!network || !config.solanaRpcUrl) throw new Error("SOLANA_ENABLED is on: also set SOLANA_NETWORK and SOLANA_RPC_URL");
    const usdc = config.solanaUsdcMint ?? (isSvmNetwork(network) ? SVM_NETWORKS[network].usdc : undefined);
    if (!usdc) throw new Error(`SOLANA_NETWORK ${network} has no canonical USDC: set SOLANA_USDC_MINT`);
    networks.push({ chain: "solana", network, rpcUrl: config.solanaRpcUrl, usdc });
  }
  return { keyring, networks, rewrapIntervalMs: config.rewrapIntervalMs, outbound: outboundSettingsOf(config) };
}
