import { env, type ConfigOf } from "@c402/config";
import { jsonRpcGasReader, type GasReader } from "./chain/gas-reader";
import { checkArbiter, type ArbiterFamily, type PerFamily } from "./domain/arbiters";

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
    "CAIP-2 id of the live EVM network whose balances arbiter readiness reads, e.g. eip155:8453 (unset: gas balances are not read)",
  ),
  evmRpcUrl: env.optionalString("EVM_RPC_URL", "JSON-RPC URL of the live EVM network (read only: balances and the gas price)", { secret: true }),
};

/** What the service is built with: the default arbiters (checked per family) and the network arbiter readiness reads. */
export interface EscrowServiceSettings {
  serviceArbiters: Partial<PerFamily<string>>;
  /** Reads arbiters' gas balances; undefined: none are read. */
  chain?: GasReader;
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
  return { serviceArbiters, chain: jsonRpcGasReader(network, config.evmRpcUrl) };
}
