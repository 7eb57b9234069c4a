export { createGatewayApp } from "./app";
export { gatewayConfigSpec, gatewayDistributedSpec, type GatewaySettings, type TrustProxy } from "./config";
export type { ServiceClients } from "./http/deps";
export { startGateway, type StartedGateway } from "./server";
export const SERVICE_VERSION = "0.0.0";
