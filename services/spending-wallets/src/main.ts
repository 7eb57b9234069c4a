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
  build: (deps, config) => createSpendingWalletsService(deps, spendingWalletsSettingsOf(config, parseKeyring(config.keyring))),
});
