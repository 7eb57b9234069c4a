import { outboxMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** The outbox identity's migration 0014 hands the pass-use counts to content-grants through. */
export const identityOutbox: Migration = outboxMigration;
