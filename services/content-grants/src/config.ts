import { env } from "@c402/config";

export const contentGrantsConfigSpec = {
  grantKeyring: env.string("GRANT_KEYRING", "keys that sign gated-content passes (id:base64 of 32 bytes, comma-separated; the first signs, all check)", {
    secret: true,
  }),
};
