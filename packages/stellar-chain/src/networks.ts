import { isStellarNetwork, STELLAR_NETWORKS } from "@c402/x402";

/** CAIP-2 ids of Stellar's networks, as x402 names them. */
export const STELLAR_TESTNET = "stellar:testnet";
export const STELLAR_PUBNET = "stellar:pubnet";

/** Circle's USDC (a Stellar Asset Contract) has 7 decimals on Stellar, where EVM's and Solana's have 6. */
export const USDC_DECIMALS = 7;

/** The passphrase a network's signatures are made over (its id is its SHA-256). */
export function networkPassphraseOf(network: string): string {
  if (!isStellarNetwork(network)) throw new Error(`${network} is not a Stellar network this service knows`);
  return STELLAR_NETWORKS[network].networkPassphrase;
}

/** Circle's USDC contract id on a network. */
export function usdcContractOf(network: string): string {
  if (!isStellarNetwork(network)) throw new Error(`${network} is not a Stellar network this service knows`);
  return STELLAR_NETWORKS[network].usdc;
}
