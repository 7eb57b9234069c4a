import type { PageNetwork } from "./page-data";

/** People's names of the networks a face may list (CAIP-2 ids); anything else is shown by its id. */
const LABELS: Record<string, string> = {
  "eip155:8453": "Base",
  "eip155:84532": "Base Sepolia",
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "Solana",
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": "Solana devnet",
  "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z": "Solana testnet",
  "stellar:pubnet": "Stellar",
  "stellar:testnet": "Stellar testnet",
};

/** The Wallet Standard's names for Solana's clusters, by genesis hash (CAIP-2 reference). */
const WALLET_CHAINS: Record<string, string> = {
  "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "solana:mainnet",
  EtWTRABZaYq6iMfeYKouRu166VU2xqa1: "solana:devnet",
  "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z": "solana:testnet",
};

export const networkLabel = (network: string): string => LABELS[network] ?? network;

/**
 * A requirement as a browser wallet pays it, or null for a family no browser
 * wallet standard covers here (Stellar: the page shows it to agents only).
 */
export function pageNetworkOf(requirement: { network: string; payTo: string }): PageNetwork | null {
  const [namespace, reference = ""] = requirement.network.split(":");
  const base = { network: requirement.network, label: networkLabel(requirement.network), pay_to: requirement.payTo };
  if (namespace === "eip155" && /^\d+$/.test(reference)) return { ...base, family: "evm", chain_id: Number(reference), wallet_chain: null };
  if (namespace === "solana" && WALLET_CHAINS[reference]) return { ...base, family: "solana", chain_id: null, wallet_chain: WALLET_CHAINS[reference] };
  return null;
}
