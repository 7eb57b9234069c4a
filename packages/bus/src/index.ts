export * from "./bus";
export { DatabaseBus, databaseBusMigrations } from "./database-bus";
export { KafkaBus, type KafkaBusOptions } from "./kafka-bus";
export * from "./outbox";
