import { env } from "@c402/config";
import { outboundSettingsSpec } from "@c402/outbound-http";

export const webhooksConfigSpec = {
  baseUrl: env.url("BASE_URL", "public base URL of the gateway (the receipt_url in webhook payloads)", { default: "http://127.0.0.1:4020" }),
  secretsKeyring: env.string(
    "WEBHOOK_SECRETS_KEYRING",
    "master keys that seal webhook secrets and the service's signing keys (id:base64 of 32 bytes, comma-separated; the first seals, all open)",
    { secret: true },
  ),
  timeoutMs: env.int("WEBHOOK_TIMEOUT_MS", "how long one delivery attempt may take before it counts as failed", { default: 10_000, min: 100, max: 60_000 }),
  concurrency: env.int("WEBHOOK_CONCURRENCY", "delivery attempts in flight at once per replica", { default: 32, min: 1, max: 1_000 }),
  signingKeyDays: env.int(
    "WEBHOOK_SIGNING_KEY_DAYS",
    "age at which the Ed25519 signing key is rotated (checked at start and daily; the old key signs beside the new one for a day)",
    {
      default: 90,
      min: 1,
      max: 3_650,
    },
  ),
  ...outboundSettingsSpec,
};
