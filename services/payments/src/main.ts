import { catalogV1, escrowV1, fulfillmentV1 } from "@c402/contracts";
import { runDistributedService } from "@c402/runtime";
import { readFileSync } from "node:fs";
import { EVM_NETWORKS, isEvmNetwork, isStellarNetwork, isSvmNetwork, STELLAR_NETWORKS, SVM_NETWORKS } from "@c402/x402";
import {
  createPaymentsService,
  paymentsConfigSpec,
  paymentsMigrations,
  PAYMENTS_SCHEMA,
  type LiveChainSettings,
  type SolanaSettings,
  type StellarSettings,
} from "./index";

void runDistributedService({
  name: "payments",
  schema: PAYMENTS_SCHEMA,
  spec: paymentsConfigSpec,
  migrations: paymentsMigrations,
  build: (deps, config, connect) => {
    const liveChains: LiveChainSettings[] = [];
    if (config.evmNetwork) {
      const known = isEvmNetwork(config.evmNetwork) ? EVM_NETWORKS[config.evmNetwork] : undefined;
      const missing = (["evmRpcUrl", "splitFactoryAddress", "facilitatorPrivateKey", "feeWalletAddress"] as const).filter((k) => !config[k]);
      if (missing.length > 0 || (!known && !config.evmUsdcAddress)) throw new Error(`EVM_NETWORK is set; also set ${missing.join(", ") || "EVM_USDC_ADDRESS"}`);
      liveChains.push({
        network: config.evmNetwork,
        rpcUrl: config.evmRpcUrl as string,
        usdc: config.evmUsdcAddress ?? (known?.usdc as string),
        usdcName: known?.name ?? "USD Coin",
        usdcVersion: known?.version ?? "2",
        splitFactory: config.splitFactoryAddress as string,
        facilitatorKey: config.facilitatorPrivateKey as string,
        feeWallet: config.feeWalletAddress as string,
        confirmations: config.confirmations,
        rpcTimeoutMs: config.rpcTimeoutMs,
      });
    }
    let solana: SolanaSettings | undefined;
    if (config.solanaEnabled) {
      const network = config.solanaNetwork;
      const missing = (["solanaNetwork", "solanaRpcUrl", "solanaFeePayerKey"] as const).filter((k) => !config[k]);
      const usdcMint = config.solanaUsdcMint ?? (network !== undefined && isSvmNetwork(network) ? SVM_NETWORKS[network].usdc : undefined);
      if (missing.length > 0 || !usdcMint) throw new Error(`SOLANA_ENABLED is on; also set ${missing.join(", ") || "SOLANA_USDC_MINT"}`);
      solana = {
        network: network as string,
        rpcUrl: config.solanaRpcUrl as string,
        usdcMint,
        feePayerKey: config.solanaFeePayerKey as string,
        rpcTimeoutMs: config.rpcTimeoutMs,
      };
    }
    let stellar: StellarSettings | undefined;
    if (config.stellarNetwork) {
      const network = config.stellarNetwork;
      if (!isStellarNetwork(network)) throw new Error(`STELLAR_NETWORK must be stellar:pubnet or stellar:testnet, not ${network}`);
      const missing = (["stellarRpcUrl", "stellarFacilitatorSecret"] as const).filter((k) => !config[k]);
      if (missing.length > 0) throw new Error(`STELLAR_NETWORK is set; also set ${missing.join(", ")}`);
      stellar = {
        network,
        rpcUrl: config.stellarRpcUrl as string,
        usdcContract: config.stellarUsdcContract ?? STELLAR_NETWORKS[network].usdc,
        facilitatorSecret: config.stellarFacilitatorSecret as string,
        channelSecrets: config.stellarChannelSecrets,
        ...(config.stellarRpcCaFile ? { rpcCaPem: readFileSync(config.stellarRpcCaFile, "utf8") } : {}),
        rpcTimeoutMs: config.rpcTimeoutMs,
        ledgerSeconds: config.stellarLedgerSeconds,
      };
    }
    return createPaymentsService(
      deps,
      {
        catalog: connect(catalogV1.CatalogService, config.catalogAddress),
        fulfillment: connect(fulfillmentV1.FulfillmentService, config.fulfillmentAddress),
        ...(config.escrowAddress ? { escrow: connect(escrowV1.EscrowService, config.escrowAddress) } : {}),
      },
      {
        subjectSecret: config.subjectSecret,
        liveChains,
        ...(solana ? { solana } : {}),
        ...(stellar ? { stellar } : {}),
        settleTimeoutMs: config.settleTimeoutMs,
        scheduleRehearsalDaySeconds: config.scheduleRehearsalDaySeconds,
        ...(config.escrowContractAddress ? { escrowContract: config.escrowContractAddress } : {}),
        ...(config.feeWalletAddress ? { feeWallet: config.feeWalletAddress } : {}),
      },
    );
  },
});
