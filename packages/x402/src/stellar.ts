import { checkStellarAddress, checkStellarContractId } from "@c402/chain-addresses";

/**
 * Stellar on the wire: the networks this service can settle on (CAIP-2 ids as
 * the official @x402/stellar 2.9 names them; x402 v1 has no Stellar names),
 * their USDC (Circle's SEP-41 token contracts, 7 decimals) and network
 * passphrases, and the shape of Stellar addresses.
 */
export const STELLAR_NETWORKS = {
  "stellar:pubnet": {
    usdc: "CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75",
    /** Circle's issuing account of USDC: the classic asset USDC:<issuer> whose asset contract `usdc` is. */
    usdcIssuer: "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN",
    testnet: false,
    networkPassphrase: "Public Global Stellar Network ; September 2015",
  },
  "stellar:testnet": {
    usdc: "CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA",
    usdcIssuer: "GBBD47IF6LWK7P7MDEVSCWR7DPUWV3NY3DTQEVFL4NAT4AQH3ZLLFLA5",
    testnet: true,
    networkPassphrase: "Test SDF Network ; September 2015",
  },
} as const;

export type StellarNetwork = keyof typeof STELLAR_NETWORKS;

export function isStellarNetwork(network: string): network is StellarNetwork {
  return Object.prototype.hasOwnProperty.call(STELLAR_NETWORKS, network);
}

/** Whether a network id is Stellar's (CAIP-2 `stellar:…`): its payloads carry a transaction XDR, not an authorization. */
export function isStellarNetworkId(network: string): boolean {
  return network.startsWith("stellar:");
}

/**
 * The largest payload transaction read (XDR bytes). The official client's
 * transfer is about 1.2 KB; a contract wallet's signature adds a few hundred
 * bytes. Its base64 is at most 10,924 characters, inside the header bound.
 */
export const MAX_STELLAR_TRANSACTION_BYTES = 8192;

/** A requirement's `asset` on Stellar: a SEP-41 token's contract id (`C…`, strkey checksum included). */
export function isStellarAsset(text: string): boolean {
  return checkStellarContractId(text).ok;
}

/**
 * A requirement's `payTo` on Stellar: an account id (`G…`) or a contract
 * (`C…`), strkey checksum included. Muxed accounts (`M…`), which the official
 * client also takes, are not issued by this service and are refused.
 */
export function isStellarPayTo(text: string): boolean {
  return checkStellarAddress(text).ok || checkStellarContractId(text).ok;
}
