import { env } from "@c402/config";

export const paymentsConfigSpec = {
  catalogAddress: env.string("CATALOG_GRPC_ADDRESS", "host:port of the catalog service"),
  fulfillmentAddress: env.string("FULFILLMENT_GRPC_ADDRESS", "host:port of the fulfillment service (calls relay checkouts' origins)"),
  escrowAddress: env.optionalString(
    "ESCROW_GRPC_ADDRESS",
    "host:port of the escrow service, which deposits escrow sales (unset: escrow checkouts' faces answer 503)",
  ),
  escrowContractAddress: env.optionalString(
    "ESCROW_CONTRACT",
    "the C402Escrow contract on the live EVM network: escrow deposits' payTo and their terms' EIP-712 verifying contract (rehearsals sign under the same address on the testnet's rehearsal domain)",
  ),
  subjectSecret: env.string("SUBJECT_SECRET", "key of the buyer pseudonym (subject) HMAC", { secret: true }),
  evmNetwork: env.optionalString("EVM_NETWORK", "CAIP-2 id of the live EVM network, e.g. eip155:8453 (unset: the live face answers 503)"),
  // RPC URLs often carry an API key.
  evmRpcUrl: env.optionalString("EVM_RPC_URL", "JSON-RPC URL of the live EVM network", { secret: true }),
  evmUsdcAddress: env.optionalString("EVM_USDC_ADDRESS", "USDC contract (default: the canonical USDC of the network)"),
  splitFactoryAddress: env.optionalString("SPLIT_FACTORY_ADDRESS", "address of the SplitFactory contract on the live network"),
  facilitatorPrivateKey: env.optionalString("FACILITATOR_PRIVATE_KEY", "key that pays gas for settlements", { secret: true }),
  feeWalletAddress: env.optionalString("FEE_WALLET_ADDRESS", "wallet that receives the protocol fee"),
  confirmations: env.int("EVM_CONFIRMATIONS", "blocks on top of a settlement before it counts", { default: 1, min: 1, max: 64 }),
  rpcTimeoutMs: env.int("EVM_RPC_TIMEOUT_MS", "how long one JSON-RPC call to the live network may take", { default: 10_000, min: 100 }),
  // Solana sits behind the spec's exposure switch: off, no requirement, discovery entry or supported kind names it.
  solanaEnabled: env.bool("SOLANA_ENABLED", "settle on Solana (the spec's exposure switch; off: nothing mentions Solana)", { default: false }),
  solanaNetwork: env.optionalString("SOLANA_NETWORK", "CAIP-2 id of the Solana network, e.g. solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp (mainnet)"),
  solanaRpcUrl: env.optionalString("SOLANA_RPC_URL", "JSON-RPC URL of the Solana network", { secret: true }),
  solanaUsdcMint: env.optionalString("SOLANA_USDC_MINT", "USDC mint on the Solana network (default: the network's canonical USDC)"),
  solanaFeePayerKey: env.optionalString(
    "SOLANA_FEE_PAYER_KEY",
    "secret key of the Solana fee payer (base58, or a JSON array of 64 numbers); it co-signs and pays network fees",
    {
      secret: true,
    },
  ),
  // Stellar has no exposure switch: with STELLAR_NETWORK unset the rail is absent and nothing mentions Stellar.
  stellarNetwork: env.optionalString("STELLAR_NETWORK", "CAIP-2 id of the Stellar network: stellar:pubnet or stellar:testnet (unset: no Stellar rail)"),
  stellarRpcUrl: env.optionalString("STELLAR_RPC_URL", "Soroban JSON-RPC URL (HTTPS) of the Stellar network", { secret: true }),
  stellarUsdcContract: env.optionalString("STELLAR_USDC_CONTRACT", "USDC contract id (C…) on the Stellar network (default: Circle's USDC of the network)"),
  stellarFacilitatorSecret: env.optionalString(
    "STELLAR_FACILITATOR_SECRET",
    "secret seed (S…) of the Stellar account that submits settlements and pays their fees (the fee-bump payer when channel accounts are set)",
    { secret: true },
  ),
  stellarChannelSecrets: env.list(
    "STELLAR_CHANNEL_SECRETS",
    "comma-separated secret seeds (S…) of channel accounts, each settling in parallel; replicas must not share any (default: none, settlements take turns on the facilitator account)",
    { default: [], secret: true },
  ),
  stellarLedgerSeconds: env.int(
    "STELLAR_LEDGER_SECONDS",
    "the shortest time a Stellar ledger takes to close (5 on the public networks): turns authorization expiry ledgers into deadlines",
    { default: 5, min: 1, max: 60 },
  ),
  stellarRpcCaFile: env.optionalString(
    "STELLAR_RPC_CA_FILE",
    "PEM file of a private certificate authority the Soroban RPC's certificate is issued by (default: the system's)",
  ),
  scheduleRehearsalDaySeconds: env.int(
    "SCHEDULE_REHEARSAL_DAY_SECONDS",
    "how long a series day lasts on the test face's compressed clock (ADR 20; default 60: a 3-period daily series runs in three minutes)",
    { default: 60, min: 1, max: 86_400 },
  ),
  // At most 20 s: a relay origin's 30 s and this wait fit in the gateway's 60 s wait for a paid request (ADR 9).
  settleTimeoutMs: env.int(
    "SETTLE_TIMEOUT_MS",
    "how long a buyer waits for the settlement receipt before 'pending' (at most 20 s: a relay origin's call and this wait fit in one paid request)",
    { default: 15_000, min: 100, max: 20_000 },
  ),
};

/** One live EVM network the payments service settles on. */
export interface LiveChainSettings {
  network: string;
  rpcUrl: string;
  usdc: string;
  usdcName: string;
  usdcVersion: string;
  splitFactory: string;
  facilitatorKey: string;
  feeWallet: string;
  confirmations: number;
  /** Default 10 s. */
  rpcTimeoutMs?: number;
}

/** The Solana network the payments service settles on. */
export interface SolanaSettings {
  network: string;
  rpcUrl: string;
  usdcMint: string;
  feePayerKey: string;
  /** Default 10 s. */
  rpcTimeoutMs?: number;
}

/** The Stellar network the payments service settles on. */
export interface StellarSettings {
  network: string;
  rpcUrl: string;
  usdcContract: string;
  facilitatorSecret: string;
  channelSecrets: readonly string[];
  /** PEM of a private CA the RPC's certificate is issued by. */
  rpcCaPem?: string;
  /** Default 10 s. */
  rpcTimeoutMs?: number;
  /** The shortest a ledger takes (default 5 s). */
  ledgerSeconds?: number;
}
