import { Asset } from "@stellar/stellar-sdk";
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

/** Circle's USDC as a classic asset, when `usdcContract` is its asset contract on the network (else undefined: another token). */
export function usdcAssetOf(network: string, networkPassphrase: string, usdcContract: string): Asset | undefined {
  if (!isStellarNetwork(network)) return undefined;
  const asset = new Asset("USDC", STELLAR_NETWORKS[network].usdcIssuer);
  return asset.contractId(networkPassphrase) === usdcContract ? asset : undefined;
}
