import { outboxMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** The outbox the schedule.* events are written to, with the change they describe. */
export const schedulesOutbox: Migration = outboxMigration;
