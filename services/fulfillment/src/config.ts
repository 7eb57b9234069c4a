import { env } from "@c402/config";
import { outboundSettingsSpec } from "@c402/outbound-http";

export const fulfillmentConfigSpec = {
  secretsKeyring: env.string(
    "SECRETS_KEYRING",
    "master keys that seal stored credentials (id:base64 of 32 bytes, comma-separated; the first seals, all open)",
    {
      secret: true,
    },
  ),
  ...outboundSettingsSpec,
};
