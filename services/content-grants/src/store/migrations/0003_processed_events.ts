import { processedEventsMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** The ids of the pass_uses.moved events applied (each adds its counts once). */
export const contentGrantsProcessedEvents: Migration = processedEventsMigration;
