import { processedEventsMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** Webhooks's processed_events table (the ids of events its consumers applied), from the one definition in @c402/bus. */
export const webhooksProcessedEvents: Migration = processedEventsMigration;
