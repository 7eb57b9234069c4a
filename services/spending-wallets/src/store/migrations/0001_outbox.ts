import { outboxMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** The outbox the account events of wallets (created, revealed, archived, limits changed) are written to, with the change. */
export const spendingWalletsOutbox: Migration = outboxMigration;
