import { env } from "@c402/config";

export const catalogConfigSpec = {
  identityAddress: env.string("IDENTITY_GRPC_ADDRESS", "host:port of the identity service"),
};
