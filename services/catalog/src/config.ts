import { env } from "@c402/config";

export const catalogConfigSpec = {
  identityAddress: env.string("IDENTITY_GRPC_ADDRESS", "host:port of the identity service"),
  fulfillmentAddress: env.string("FULFILLMENT_GRPC_ADDRESS", "host:port of the fulfillment service (binds relay checkouts' origin credentials)"),
};
