import { address, type Address } from "@solana/kit";

/** The genesis hash of Solana devnet: this node answers getGenesisHash with it. */
export const SOLANA_DEVNET_GENESIS_HASH = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

/** The CAIP-2 id of Solana devnet (x402 names networks this way). */
export const SOLANA_DEVNET_NETWORK = `solana:${SOLANA_DEVNET_GENESIS_HASH}` as const;

/** Circle's USDC on Solana devnet, recreated here at its real address. */
export const DEVNET_USDC_MINT: Address = address("4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU");
export const DEVNET_USDC_DECIMALS = 6;

/** A validator refuses a blockhash older than this many blocks (agave's MAX_PROCESSING_AGE). */
export const MAX_PROCESSING_AGE = 150n;

/** A validator's status cache remembers signatures for this many slots (MAX_RECENT_BLOCKHASHES). */
export const STATUS_CACHE_SLOTS = 300n;

/** Devnet's epochs are this long (no warmup). */
export const SLOTS_PER_EPOCH = 432_000n;

/** What a validator charges per signature. */
export const LAMPORTS_PER_SIGNATURE = 5_000n;

/** The agave release litesvm 1.5 is built on (getVersion reports it). */
export const AGAVE_VERSION = "4.3.0";
