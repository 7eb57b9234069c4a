import { env } from "@c402/config";

export const identityConfigSpec = {
  baseUrl: env.url("BASE_URL", "public base URL of the gateway (named in wallet challenges)", { default: "http://127.0.0.1:4020" }),
  challengeTtlSeconds: env.int("WALLET_CHALLENGE_TTL_SECONDS", "lifetime of a wallet sign-in challenge", { default: 600, min: 30, max: 3600 }),
};
