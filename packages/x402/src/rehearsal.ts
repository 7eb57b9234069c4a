import { EVM_NETWORKS, type EvmNetwork } from "./evm";

/** Where every EVM rehearsal is quoted and signed (ADR 5): the Base testnet, settled simulated. */
export const REHEARSAL_NETWORK: EvmNetwork = "eip155:84532";

/**
 * The EIP-712 domain a rehearsal payment is signed under (ADR 5): the testnet
 * USDC's address and chain, so the official clients sign it unchanged, but a
 * name no token contract has. A rehearsal signature is therefore never a valid
 * `transferWithAuthorization` (or escrow deposit) on any chain, whatever route
 * it is replayed to, and a wallet that shows the domain tells a person no funds move.
 */
export const REHEARSAL_DOMAIN = { name: "USDC rehearsal - no funds move", version: "2" } as const;

/** The token a rehearsal names: the testnet USDC's address under the rehearsal domain. */
export const REHEARSAL_TOKEN = { address: EVM_NETWORKS[REHEARSAL_NETWORK].usdc, ...REHEARSAL_DOMAIN } as const;
