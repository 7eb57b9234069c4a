import { outboxMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** The outbox the escrow_settings.updated account events (and, with deposits, the escrow.* events) are written to. */
export const escrowOutbox: Migration = outboxMigration;
