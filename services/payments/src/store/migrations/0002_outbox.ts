import { outboxMigration } from "@c402/bus";
import type { Migration } from "@c402/db";

/** The outbox `payment.settled` is written to (ADR 3): the table every emitting service includes from `@c402/bus`. */
export const paymentsOutbox: Migration = outboxMigration;
