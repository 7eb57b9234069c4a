import { outboxMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** The outbox webhooks' account events are written to (a receiver registered, re-keyed, deleted or disabled). */
export const webhooksOutbox: Migration = outboxMigration;
