import { env, type ConfigOf } from "@c402/config";
import { checkEvmAddress } from "@c402/chain-addresses";
import { getAddress, type Address } from "viem";
import { jsonRpcEscrowChain, type EscrowChain } from "./chain/escrow-chain";
import { jsonRpcGasReader, type GasReader } from "./chain/gas-reader";
import { checkArbiter, type ArbiterFamily, type PerFamily } from "./domain/arbiters";
import type { EscrowContract } from "./domain/deposits";

export const escrowConfigSpec = {
  defaultArbiterEvm: env.optionalString(
    "ESCROW_DEFAULT_ARBITER_EVM",
    "the service's default escrow arbiter on EVM (Base), last in the resolution order (after the create's arbiter_evm and the account's escrow_arbiter_evm); unset: none, so an escrow checkout naming none offers no escrow rail",
  ),
  defaultArbiterSvm: env.optionalString(
    "ESCROW_DEFAULT_ARBITER_SVM",
    "the service's default escrow arbiter on Solana (base58), in the same order; kept in terms, though this deployment offers no Solana escrow rail",
  ),
  evmNetwork: env.optionalString(
    "EVM_NETWORK",
    "CAIP-2 id of the live EVM network whose balances arbiter readiness reads and where the escrow contract is, e.g. eip155:8453 (unset: gas balances are not read, no escrows)",
  ),
  evmRpcUrl: env.optionalString("EVM_RPC_URL", "JSON-RPC URL of the live EVM network (balances, the gas price, the escrow contract's calls and logs)", {
    secret: true,
  }),
  escrowContract: env.optionalString(
    "ESCROW_CONTRACT",
    "address of the C402Escrow contract on EVM_NETWORK (ADR 18); unset: escrow deposits answer unavailable",
  ),
  escrowUsdc: env.optionalString(
    "ESCROW_USDC_ADDRESS",
    "the USDC contract the escrow contract holds (its EIP-3009 domain signs deposits; default: the canonical USDC of EVM_NETWORK)",
  ),
  escrowUsdcName: env.optionalString("ESCROW_USDC_NAME", "that USDC's EIP-712 name (default: USD Coin on Base, USDC elsewhere)"),
  escrowRelayerKey: env.optionalString(
    "ESCROW_RELAYER_KEY",
    "private key (0x hex) of the escrow relayer, which sends deposits, relayed actions and timed exits and pays their gas: its own key, never the facilitator's (ADR 11); unset: live escrow deposits answer unavailable",
    { secret: true },
  ),
  escrowStartBlock: env.optionalString(
    "ESCROW_START_BLOCK",
    "the block the contract-event reader starts from on its first start (default: the chain's head then)",
  ),
};

/** The canonical USDC of the networks escrow runs on (the devchain places its test USDC at Base Sepolia's address). */
const CANONICAL_USDC: Record<string, { address: Address; name: string }> = {
  "eip155:8453": { address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", name: "USD Coin" },
  "eip155:84532": { address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", name: "USDC" },
};

/** What the service is built with: the default arbiters (checked per family), the network arbiter readiness reads, and the escrow contract and its relayer. */
export interface EscrowServiceSettings {
  serviceArbiters: Partial<PerFamily<string>>;
  /** Reads arbiters' gas balances; undefined: none are read. */
  chain?: GasReader;
  /** The contract escrows are deposited to (test escrows' signatures are checked against it too); undefined: no escrows. */
  contract?: EscrowContract;
  /** The contract's chain and the relayer; undefined: live deposits answer unavailable. */
  escrowChain?: EscrowChain;
  /** The reader's first block. */
  startBlock?: bigint;
}

/** The settings of a configuration: an address a chain would refuse, or a network without its RPC URL, stops the start. */
export function escrowSettingsOf(config: Partial<ConfigOf<typeof escrowConfigSpec>>): EscrowServiceSettings {
  const serviceArbiters: Partial<PerFamily<string>> = {};
  const given: [ArbiterFamily, string, string | undefined][] = [
    ["evm", "ESCROW_DEFAULT_ARBITER_EVM", config.defaultArbiterEvm],
    ["svm", "ESCROW_DEFAULT_ARBITER_SVM", config.defaultArbiterSvm],
  ];
  for (const [family, variable, text] of given) {
    if (text === undefined || text === "") continue;
    const checked = checkArbiter(family, text);
    if (!checked.ok) throw new Error(`${variable} ${checked.reason}`);
    serviceArbiters[family] = checked.address;
  }
  const network = config.evmNetwork === "" ? undefined : config.evmNetwork;
  if (network === undefined) return { serviceArbiters };
  if (!/^eip155:[0-9]{1,20}$/.test(network)) throw new Error(`EVM_NETWORK must be an EVM CAIP-2 id (eip155:<chain id>), not ${JSON.stringify(network)}`);
  if (!config.evmRpcUrl) throw new Error("EVM_RPC_URL is required when EVM_NETWORK is set (arbiter readiness reads balances there)");
  const settings: EscrowServiceSettings = { serviceArbiters, chain: jsonRpcGasReader(network, config.evmRpcUrl) };
  if (!config.escrowContract) return settings;
  const contract = evmAddress("ESCROW_CONTRACT", config.escrowContract);
  const canonical = CANONICAL_USDC[network];
  const usdc = config.escrowUsdc ? evmAddress("ESCROW_USDC_ADDRESS", config.escrowUsdc) : canonical?.address;
  if (!usdc) throw new Error(`ESCROW_USDC_ADDRESS is required on ${network} (no canonical USDC known there)`);
  settings.contract = {
    network,
    chainId: Number(network.split(":")[1]),
    address: contract,
    token: { address: usdc, name: config.escrowUsdcName || canonical?.name || "USDC", version: "2" },
  };
  if (config.escrowStartBlock) {
    if (!/^[0-9]{1,20}$/.test(config.escrowStartBlock)) throw new Error("ESCROW_START_BLOCK must be a block number");
    settings.startBlock = BigInt(config.escrowStartBlock);
  }
  if (config.escrowRelayerKey) {
    if (!/^0x[0-9a-fA-F]{64}$/.test(config.escrowRelayerKey)) throw new Error("ESCROW_RELAYER_KEY must be a private key: 0x and 64 hex digits");
    settings.escrowChain = jsonRpcEscrowChain({ network, rpcUrl: config.evmRpcUrl, contract, relayerKey: config.escrowRelayerKey });
  }
  return settings;
}

function evmAddress(variable: string, text: string): Address {
  const checked = checkEvmAddress(text);
  if (!checked.ok) throw new Error(`${variable} ${checked.reason}`);
  return getAddress(checked.address);
}
