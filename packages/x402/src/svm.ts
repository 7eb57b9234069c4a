/**
 * Solana on the wire: the networks this service can settle on (CAIP-2 ids
 * with the genesis-hash reference, as the official @x402/svm names them), their
 * USDC mints and v1 names, and the shape of a Solana address.
 */
export const SVM_NETWORKS = {
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": { usdc: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", testnet: false, v1Name: "solana" },
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": { usdc: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", testnet: true, v1Name: "solana-devnet" },
} as const;

export type SvmNetwork = keyof typeof SVM_NETWORKS;

export function isSvmNetwork(network: string): network is SvmNetwork {
  return Object.prototype.hasOwnProperty.call(SVM_NETWORKS, network);
}

/**
 * The Solana network rehearsals are quoted on where `live` is the deployment's
 * Solana network: itself when it is a testnet, else the devnet (the test face
 * lists testnet rails only; ADR 5).
 */
export function svmRehearsalNetwork(live: string): SvmNetwork {
  return isSvmNetwork(live) && SVM_NETWORKS[live].testnet ? live : "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
}

/** Whether a network id (CAIP-2, or a v1 name) is Solana's: its payloads carry a transaction, not an authorization. */
export function isSolanaNetworkId(network: string): boolean {
  return network.startsWith("solana:") || network === "solana" || network === "solana-devnet";
}

/** A base58 public key as written (32 bytes: 32 to 44 characters of the Bitcoin alphabet). */
export const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** The largest Solana transaction (the packet limit), so its base64 is at most 1,644 characters. */
export const MAX_SVM_TRANSACTION_BYTES = 1232;

/** One recipient of a prepared Solana payment, as its requirement's `extra.transfers` lists it (base units in decimal text). */
export interface RequirementTransfer {
  payTo: string;
  amount: string;
}

/**
 * A prepared Solana requirement's recipients (`extra.transfers`: the seller's
 * share and a platform cut, one TransferChecked each, in order); none for a
 * requirement an x402 client signs as issued.
 */
export function requirementTransfers(extra: Readonly<Record<string, unknown>>): RequirementTransfer[] {
  const transfers = extra.transfers;
  if (!Array.isArray(transfers)) return [];
  return transfers.flatMap((t: unknown) => {
    const { payTo, amount } = (t ?? {}) as { payTo?: unknown; amount?: unknown };
    return typeof payTo === "string" && typeof amount === "string" ? [{ payTo, amount }] : [];
  });
}
