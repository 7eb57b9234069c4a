import { processedEventsMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** Payments' processed_events table (the ids of the escrow events its consumer applied, ADR 19), from the one definition in @c402/bus. */
export const paymentsProcessedEvents: Migration = processedEventsMigration;
