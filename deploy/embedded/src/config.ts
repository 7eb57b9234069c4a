import { env } from "@c402/config";
import { gatewayConfigSpec } from "@c402/gateway";
import { escrowConfigSpec } from "@c402/escrow";
import { paymentsConfigSpec } from "@c402/payments";
import { identityConfigSpec } from "@c402/identity";
import { busSpec, observabilitySpec } from "@c402/runtime";

/** What `npm start` (every service in one process) reads: the gateway's settings and these. */
export const embeddedConfigSpec = {
  ...gatewayConfigSpec,
  dataDir: env.string("DATA_DIR", "where the embedded database and secrets live", { default: ".data" }),
  devchainPort: env.optionalString("DEVCHAIN_PORT", "port of the local EVM chain (default 8545, or a free one when taken; 0 picks a free one)"),
  solanaEnabled: env.bool(
    "SOLANA_ENABLED",
    "settle on Solana, on a local devnet started with the service (the spec's exposure switch; off: nothing mentions Solana)",
    {
      default: true,
    },
  ),
  solanaDevnetPort: env.optionalString("SOLANA_DEVNET_PORT", "port of the local Solana devnet (default: one the OS picks)"),
  stellarEnabled: env.bool("STELLAR_ENABLED", "settle on Stellar, on a local Soroban RPC stand-in started with the service (as stellar:testnet)", {
    default: true,
  }),
  stellarStandinPort: env.optionalString("STELLAR_STANDIN_PORT", "port of the local Stellar stand-in (default: one the OS picks)"),
  logLevel: env.oneOf("LOG_LEVEL", "log level", ["fatal", "error", "warn", "info", "debug", "trace"] as const, { default: "info" }),
  smtpUrl: identityConfigSpec.smtpUrl,
  mailFrom: identityConfigSpec.mailFrom,
  escrowDefaultArbiterEvm: escrowConfigSpec.defaultArbiterEvm,
  escrowDefaultArbiterSvm: escrowConfigSpec.defaultArbiterSvm,
  scheduleRehearsalDaySeconds: paymentsConfigSpec.scheduleRehearsalDaySeconds,
  outboundAllowLoopback: env.bool("OUTBOUND_ALLOW_LOOPBACK", "let sellers' origins, MCP servers and webhook receivers be on loopback (this machine)", {
    default: true,
  }),
  ...observabilitySpec,
  ...busSpec,
  outboundResolveNames: env.bool("OUTBOUND_RESOLVE_NAMES", "look up names in sellers' URLs in DNS (false: IP-literal URLs only)", { default: true }),
};
