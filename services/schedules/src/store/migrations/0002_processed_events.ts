import { processedEventsMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** The payment.settled events the series consumer applied (idempotentConsumer). */
export const schedulesProcessedEvents: Migration = processedEventsMigration;
