import { env } from "@c402/config";

export const paymentsConfigSpec = {
  catalogAddress: env.string("CATALOG_GRPC_ADDRESS", "host:port of the catalog service"),
  subjectSecret: env.string("SUBJECT_SECRET", "key of the buyer pseudonym (subject) HMAC", { secret: true }),
  liveNetworks: env.list("LIVE_NETWORKS", "CAIP-2 networks the live face lists", { default: ["eip155:8453", "eip155:84532"] }),
};
