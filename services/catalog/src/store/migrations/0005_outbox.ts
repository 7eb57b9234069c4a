import { outboxMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** The outbox catalog's account events are written to (ADR 3): the table every emitting service includes from `@c402/bus`. */
export const catalogOutbox: Migration = outboxMigration;
