export * from "./infra";
export * from "./rpc-fault-proxy";
export * from "./databases";
export * from "./openapi";
export * from "./script-process";
export * from "./stellar";
