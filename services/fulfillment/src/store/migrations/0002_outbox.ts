import { outboxMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** The outbox fulfillment's account events are written to (ADR 3). */
export const fulfillmentOutbox: Migration = outboxMigration;
