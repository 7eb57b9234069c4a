import { Asset, Networks } from "@stellar/stellar-base";

/** The CAIP-2 ids of the Stellar networks the stand-in can present itself as. */
export type StellarNetwork = "stellar:testnet" | "stellar:pubnet";

export const STELLAR_TESTNET = "stellar:testnet";
export const STELLAR_PUBNET = "stellar:pubnet";

/** Circle's USDC issuing accounts: the asset contract id (the SAC) follows from the issuer and the passphrase. */
const USDC_ISSUERS: Record<StellarNetwork, string> = {
  "stellar:testnet": "GBBD47IF6LWK7P7MDEVSCWR7DPUWV3NY3DTQEVFL4NAT4AQH3ZLLFLA5",
  "stellar:pubnet": "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN",
};

const PASSPHRASES: Record<StellarNetwork, string> = {
  "stellar:testnet": Networks.TESTNET,
  "stellar:pubnet": Networks.PUBLIC,
};

/** USDC has 7 decimals on Stellar (every classic asset has). */
export const USDC_DECIMALS = 7;

/**
 * The protocol whose XDR the stand-in writes (TransactionMeta v4, LedgerCloseMeta v2,
 * CAP-67 events): both stellar-base 14 and 15 read it.
 */
export const PROTOCOL_VERSION = 23;

export interface NetworkFacts {
  network: StellarNetwork;
  passphrase: string;
  usdcAsset: Asset;
  /** The USDC Stellar Asset Contract id (C…), the same as on the real network. */
  usdcContract: string;
  /** The native (XLM) asset contract: fees are reported as its `fee` events. */
  nativeContract: string;
}

export function isStellarNetwork(value: unknown): value is StellarNetwork {
  return value === STELLAR_TESTNET || value === STELLAR_PUBNET;
}

export function networkFacts(network: StellarNetwork): NetworkFacts {
  const passphrase = PASSPHRASES[network];
  const usdcAsset = new Asset("USDC", USDC_ISSUERS[network]);
  return { network, passphrase, usdcAsset, usdcContract: usdcAsset.contractId(passphrase), nativeContract: Asset.native().contractId(passphrase) };
}
