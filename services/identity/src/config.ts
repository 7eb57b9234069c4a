import { env } from "@c402/config";

export const identityConfigSpec = {
  baseUrl: env.url("BASE_URL", "public base URL of the gateway (named in wallet challenges and sign-in links)", { default: "http://127.0.0.1:4020" }),
  challengeTtlSeconds: env.int("WALLET_CHALLENGE_TTL_SECONDS", "lifetime of a wallet sign-in challenge", { default: 600, min: 30, max: 3600 }),
  smtpUrl: env.optionalString("SMTP_URL", "smtp:// or smtps:// URL of the relay sign-in mails go through; unset: written as .eml files under DATA_DIR/mail", {
    secret: true,
  }),
  mailFrom: env.string("MAIL_FROM", "sender of sign-in mails: an address or `Name <address>`", { default: "c402 <no-reply@example.com>" }),
  dataDir: env.string("DATA_DIR", "where sign-in mails are written as .eml files (under mail/) when SMTP_URL is unset", { default: ".data" }),
};
