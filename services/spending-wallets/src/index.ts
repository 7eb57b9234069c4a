import { healthV1, spendingWalletsV1, TOPICS } from "@c402/contracts";
import { migrate } from "@c402/db";
import { createGuardedFetch, outboundPolicyOf } from "@c402/outbound-http";
import { serviceOutboxRelay, standardHealth, startPeriodic, type PeriodicTask, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { SecretSealer } from "@c402/sealed-secrets";
import { evmChainReader, solanaChainReader, type ChainReader } from "./chain/chain-readers";
import type { SpendingWalletsSettings, WalletNetwork } from "./config";
import { ChainBalanceReader } from "./domain/balance-reader";
import { KeyRotation, type KeyRotationOptions } from "./domain/key-rotation";
import type { WalletChain } from "./domain/ports";
import { PostgresSpendBudget } from "./domain/spend-budget";
import { WalletBook } from "./domain/wallet-book";
import { WalletEventLog } from "./domain/wallet-event-log";
import { SealedKeyVault } from "./domain/wallet-vault";
import type { PayEngineFactory } from "./domain/pay-engine-ports";
import { MAX_GOODS_BYTES, X402PayEngine } from "./pay";
import { spendingWalletsRpc } from "./rpc/spending-wallets-rpc";
import type { SpendingWalletsDb } from "./store/wallet-store";
import { spendingWalletsOutbox } from "./store/migrations/0001_outbox";
import { spendingWalletsBook } from "./store/migrations/0002_wallet_book";

export { SPENDING_WALLETS_SCHEMA } from "./store/wallet-store";
export { spendingWalletsConfigSpec, spendingWalletsSettingsSpec, spendingWalletsSettingsOf, type SpendingWalletsSettings, type WalletNetwork } from "./config";
export type { PayEngineFactory, PayEnginePorts } from "./domain/pay-engine-ports";
export type * from "./domain/ports";
export const spendingWalletsMigrations = {
  "0001_outbox": spendingWalletsOutbox,
  "0002_wallet_book": spendingWalletsBook,
};

/** What a test may change of the service's clock, chains and background work. */
export interface SpendingWalletsTuning {
  clock?: () => Date;
  /** Readers used instead of the JSON-RPC ones the settings' networks would give. */
  chainReaders?: ChainReader[];
  /** false: no re-wrap sweep (a test drives KeyRotation itself). */
  rewrapSweep?: boolean;
  rotation?: KeyRotationOptions;
  /** The pay engine built from the book's ports instead of X402PayEngine (a stand-in). */
  payEngine?: PayEngineFactory;
}

/**
 * Spending wallets (ADR 21): the one custodial exception of the spec. An
 * account's wallet per chain, its key sealed at rest and opened only to sign,
 * paying any x402 URL under limits reserved before anything is signed.
 */
export async function createSpendingWalletsService(
  deps: ServiceDeps,
  settings: SpendingWalletsSettings,
  tuning: SpendingWalletsTuning = {},
): Promise<ServiceModule> {
  await migrate(deps.database, spendingWalletsMigrations);
  const db = deps.database.db as SpendingWalletsDb;
  const relay = serviceOutboxRelay(deps, "spending-wallets");
  const sealer = new SecretSealer(settings.keyring);
  const clock = tuning.clock ?? (() => new Date());
  const chains = new Map<WalletChain, ChainReader>((tuning.chainReaders ?? settings.networks.map(chainReaderOf)).map((r) => [r.chain, r]));
  const events = new WalletEventLog(db, clock);
  const book = new WalletBook({ db, sealer, events, chains, clock, onOutbox: () => relay.poke() });
  const rotation = new KeyRotation(db, sealer, tuning.rotation);
  // The URLs agents pay are the internet's: fetched through the outbound guard, never following a redirect.
  const fetch = createGuardedFetch(outboundPolicyOf(settings.outbound, { timeoutMs: 30_000, maxRedirects: 0, maxResponseBytes: MAX_GOODS_BYTES }));
  const payEngine = (tuning.payEngine ?? x402PayEngine)({
    budget: new PostgresSpendBudget(db, events, clock),
    vault: new SealedKeyVault(db, sealer),
    balances: new ChainBalanceReader(chains),
    events,
    fetch,
    networks: settings.networks,
    logger: deps.logger,
  });
  let sweep: PeriodicTask | undefined;
  return {
    name: "spending-wallets",
    register(server) {
      server.add(spendingWalletsV1.SpendingWalletsService, spendingWalletsRpc({ book, events, sealer, chains, rotation, payEngine }));
      server.add(healthV1.HealthService, standardHealth(deps, "spending-wallets"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.accountActivity]);
      relay.start();
      if (tuning.rewrapSweep !== false) {
        sweep = startPeriodic({ name: "spending wallets re-wrap", intervalMs: settings.rewrapIntervalMs, round: () => rotation.round(), logger: deps.logger });
      }
    },
    async stop() {
      await sweep?.stop();
      await relay.stop();
      await fetch.close();
    },
  };
}

/** The official x402 client's engine, paying on the chains offered (each network with its USDC; Solana's RPC for the SVM client). */
const x402PayEngine: PayEngineFactory = ({ networks, ...ports }) =>
  new X402PayEngine({ ...ports, networks: Object.fromEntries(networks.map((n) => [n.network, { usdc: n.usdc, rpcUrl: n.rpcUrl }])) });

function chainReaderOf(n: WalletNetwork): ChainReader {
  return n.chain === "base"
    ? evmChainReader({ network: n.network, rpcUrl: n.rpcUrl, usdc: n.usdc })
    : solanaChainReader({ network: n.network, rpcUrl: n.rpcUrl, usdcMint: n.usdc });
}
