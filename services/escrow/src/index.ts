import { escrowV1, healthV1, TOPICS } from "@c402/contracts";
import { migrate } from "@c402/db";
import { serviceOutboxRelay, standardHealth, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { EscrowAccounts } from "./domain/account-settings";
import type { EscrowServiceSettings } from "./config";
import { escrowRpc } from "./rpc/escrow-rpc";
import type { EscrowDb } from "./store/escrow-store";
import { escrowSettings } from "./store/migrations/0001_escrow_settings";
import { escrows } from "./store/migrations/0002_escrows";
import { escrowOutbox } from "./store/migrations/0003_outbox";
import { escrowLedger } from "./store/migrations/0004_escrow_ledger";
import { senderNoncesName } from "./store/migrations/0005_sender_nonces";
import { EscrowBook } from "./domain/escrow-book";
import { EscrowSweeper } from "./domain/escrow-sweeper";

export const ESCROW_SCHEMA = "escrow";
export { escrowConfigSpec, escrowSettingsOf, type EscrowServiceSettings } from "./config";
export { EscrowAccounts } from "./domain/account-settings";
export * from "./domain/windows";
export * from "./domain/transitions";
export * from "./domain/next-step";
export * from "./domain/arbiters";
export * from "./domain/settings";
export * from "./domain/terms";
export * from "./domain/readiness";
export { jsonRpcGasReader, type GasReader } from "./chain/gas-reader";
export { jsonRpcEscrowChain, type EscrowChain } from "./chain/escrow-chain";
export { EscrowBook } from "./domain/escrow-book";
export { EscrowSweeper } from "./domain/escrow-sweeper";
export type { EscrowContract } from "./domain/deposits";
export const escrowMigrations = {
  "0001_escrow_settings": escrowSettings,
  "0002_escrows": escrows,
  "0003_outbox": escrowOutbox,
  "0004_escrow_ledger": escrowLedger,
  "0005_sender_nonces": senderNoncesName,
};

/** What a test may change of the service's background work and waits. */
export interface EscrowServiceTuning {
  sweepIntervalMs?: number;
  resumeAfterMs?: number;
  confirmTimeoutMs?: number;
  now?: () => Date;
}

/**
 * Escrow (spec, Escrow): accounts' escrow settings and the rules of escrow
 * terms today; escrows' state, actions and timers as the escrow checkout
 * slice adds them. It publishes through its outbox: escrow_settings.updated
 * account events now, escrow.* events with the deposits.
 */
export async function createEscrowService(deps: ServiceDeps, settings: EscrowServiceSettings, tuning: EscrowServiceTuning = {}): Promise<ServiceModule> {
  await migrate(deps.database, escrowMigrations);
  const db = deps.database.db as EscrowDb;
  const relay = serviceOutboxRelay(deps, "escrow");
  const accounts = new EscrowAccounts(db, {
    serviceArbiters: settings.serviceArbiters,
    ...(settings.chain ? { chain: settings.chain } : {}),
    onOutbox: () => relay.poke(),
  });
  const book = new EscrowBook(db, {
    ...(settings.contract ? { contract: settings.contract } : {}),
    ...(settings.escrowChain ? { chain: settings.escrowChain } : {}),
    ...(settings.chain ? { gas: settings.chain } : {}),
    ...(tuning.now ? { now: tuning.now } : {}),
    ...(tuning.confirmTimeoutMs !== undefined ? { confirmTimeoutMs: tuning.confirmTimeoutMs } : {}),
    onOutbox: () => relay.poke(),
  });
  const sweeper = new EscrowSweeper(db, book, {
    logger: deps.logger,
    ...(settings.startBlock !== undefined ? { startBlock: settings.startBlock } : {}),
    ...(tuning.sweepIntervalMs !== undefined ? { intervalMs: tuning.sweepIntervalMs } : {}),
    ...(tuning.resumeAfterMs !== undefined ? { resumeAfterMs: tuning.resumeAfterMs } : {}),
  });
  return {
    name: "escrow",
    register(server) {
      server.add(escrowV1.EscrowService, escrowRpc(accounts, book, tuning.now ?? (() => new Date())));
      server.add(healthV1.HealthService, standardHealth(deps, "escrow"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.accountActivity, TOPICS.escrowEvents]);
      relay.start();
      // Resumes what a crash left (the first round runs at once), then keeps reading the chain and the clocks.
      sweeper.start();
    },
    async stop() {
      await sweeper.stop();
      await relay.stop();
    },
  };
}
