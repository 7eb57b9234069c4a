export * from "./bus";
export { MemoryBus } from "./memory-bus";
export { KafkaBus, type KafkaBusOptions } from "./kafka-bus";
export * from "./outbox";
