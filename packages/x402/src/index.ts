export * from "./wire";
export * from "./evm";
