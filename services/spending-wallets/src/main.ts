import { runDistributedService } from "@c402/runtime";
import { parseKeyring } from "@c402/sealed-secrets";
import {
  createSpendingWalletsService,
  spendingWalletsConfigSpec,
  spendingWalletsMigrations,
  spendingWalletsSettingsOf,
  SPENDING_WALLETS_SCHEMA,
} from "./index";

void runDistributedService({
  name: "spending-wallets",
  schema: SPENDING_WALLETS_SCHEMA,
  spec: spendingWalletsConfigSpec,
  migrations: spendingWalletsMigrations,
  // No pay engine yet: Pay answers unavailable until X402PayEngine is wired here (payEngine: (ports) => new X402PayEngine(ports)).
  build: (deps, config) => createSpendingWalletsService(deps, spendingWalletsSettingsOf(config, parseKeyring(config.keyring))),
});
