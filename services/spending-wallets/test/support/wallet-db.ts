import { migrate, openPostgres, type ServiceDatabase } from "@c402/db";
import { freshPostgresDatabase } from "@c402/testkit";
import { SPENDING_WALLETS_SCHEMA, spendingWalletsMigrations } from "../../src";
import type { SpendingWalletsDb } from "../../src/store/wallet-store";

/** A fresh PostgreSQL database with the service's schema migrated; `open` gives another pool on it (another replica). */
export async function walletDatabase(): Promise<{
  database: ServiceDatabase;
  db: SpendingWalletsDb;
  open(): ServiceDatabase;
  close(): Promise<void>;
}> {
  const fresh = await freshPostgresDatabase();
  const pools: ServiceDatabase[] = [];
  const open = () => {
    const database = openPostgres({ url: fresh.url, schema: SPENDING_WALLETS_SCHEMA });
    pools.push(database);
    return database;
  };
  const database = open();
  await migrate(database, spendingWalletsMigrations);
  return {
    database,
    db: database.db as SpendingWalletsDb,
    open,
    async close() {
      for (const pool of pools) await pool.close();
      await fresh.drop();
    },
  };
}
