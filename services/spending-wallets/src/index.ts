import { healthV1, spendingWalletsV1, TOPICS } from "@c402/contracts";
import { migrate } from "@c402/db";
import { standardHealth, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import type { Keyring } from "@c402/sealed-secrets";
import { spendingWalletsRpc } from "./rpc/spending-wallets-rpc";
import { spendingWalletsOutbox } from "./store/migrations/0001_outbox";

export const SPENDING_WALLETS_SCHEMA = "spending_wallets";
export { spendingWalletsConfigSpec } from "./config";
export const spendingWalletsMigrations = {
  "0001_outbox": spendingWalletsOutbox,
};

export interface SpendingWalletsSettings {
  /** The keys that seal wallets' keys (SPENDING_WALLETS_KEYRING). */
  keyring: Keyring;
}

/**
 * Spending wallets (ADR 21): the one custodial exception of the spec. An
 * account's wallet per chain, its key sealed at rest and opened only to sign,
 * paying any x402 URL under limits reserved before anything is signed.
 */
export async function createSpendingWalletsService(deps: ServiceDeps, _settings: SpendingWalletsSettings): Promise<ServiceModule> {
  await migrate(deps.database, spendingWalletsMigrations);
  return {
    name: "spending-wallets",
    register(server) {
      server.add(spendingWalletsV1.SpendingWalletsService, spendingWalletsRpc());
      server.add(healthV1.HealthService, standardHealth(deps, "spending-wallets"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.accountActivity]);
    },
    async stop() {},
  };
}
