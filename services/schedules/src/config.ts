import { env, type ConfigOf } from "@c402/config";
import { jsonRpcChainClock, type ChainClock } from "./chain/chain-clock";
import type { RetryPolicy } from "./domain/retry-backoff";

/** The service's own settings (every one with a default: the embedded runner reads them as they are). */
export const schedulesSettingsSpec = {
  baseUrl: env.url("BASE_URL", "public base URL of the gateway (a series' url is BASE_URL/schedule/{id})", { default: "http://127.0.0.1:4020" }),
  evmNetwork: env.optionalString(
    "EVM_NETWORK",
    "CAIP-2 id of the live EVM network whose latest block time is a live series' clock, e.g. eip155:8453 (unset: live series are never charged)",
  ),
  evmRpcUrl: env.optionalString("EVM_RPC_URL", "JSON-RPC URL of the live EVM network (read only: the latest block's time)", { secret: true }),
  retryBaseSeconds: env.int(
    "SCHEDULE_RETRY_BASE_SECONDS",
    "wait before the first retry of a held period that could not settle (doubles each attempt; a test-mode series scales it to its compressed day)",
    { default: 30, min: 1, max: 3_600 },
  ),
  retryMaxSeconds: env.int("SCHEDULE_RETRY_MAX_SECONDS", "longest wait between two retries of one held period", { default: 3_600, min: 1, max: 86_400 }),
  sweepIntervalMs: env.int("SCHEDULE_SWEEP_INTERVAL_MS", "pause between two rounds of the scheduler (due periods, closed windows)", {
    default: 2_000,
    min: 50,
    max: 60_000,
  }),
  chargeLeaseSeconds: env.int(
    "SCHEDULE_CHARGE_LEASE_SECONDS",
    "how long a replica owns a claimed period while it asks payments to charge it (another replica takes it again once the lease expired)",
    { default: 60, min: 5, max: 3_600 },
  ),
};

/** The distributed process's settings: its own, and where payments is. */
export const schedulesConfigSpec = {
  ...schedulesSettingsSpec,
  paymentsAddress: env.string("PAYMENTS_GRPC_ADDRESS", "host:port of the payments service (ChargeHeldPeriod, CancelHeldAuthorizations)"),
};

/** What the service is built with besides its clients. */
export interface SchedulesSettings {
  baseUrl: string;
  /** A live series' clock; undefined: live periods are never due (no chain to read). */
  chain?: ChainClock;
  retry: RetryPolicy;
  sweepIntervalMs: number;
  chargeLeaseMs: number;
}

/** The settings of a configuration: a network without its RPC URL stops the start. */
export function schedulesSettingsOf(config: ConfigOf<typeof schedulesSettingsSpec>): SchedulesSettings {
  const settings: SchedulesSettings = {
    baseUrl: config.baseUrl.replace(/\/+$/, ""),
    retry: { baseMs: config.retryBaseSeconds * 1_000, maxMs: Math.max(config.retryMaxSeconds, config.retryBaseSeconds) * 1_000 },
    sweepIntervalMs: config.sweepIntervalMs,
    chargeLeaseMs: config.chargeLeaseSeconds * 1_000,
  };
  const network = config.evmNetwork || undefined;
  if (network === undefined) return settings;
  if (!/^eip155:[0-9]{1,20}$/.test(network)) throw new Error(`EVM_NETWORK must be an EVM CAIP-2 id (eip155:<chain id>), not ${JSON.stringify(network)}`);
  if (!config.evmRpcUrl) throw new Error("EVM_RPC_URL is required when EVM_NETWORK is set (a live series' clock is its latest block time)");
  return { ...settings, chain: jsonRpcChainClock(network, config.evmRpcUrl) };
}
