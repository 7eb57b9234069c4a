import { outboxMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** The outbox a seller's pass.issued account event is written to. */
export const contentGrantsOutbox: Migration = outboxMigration;
