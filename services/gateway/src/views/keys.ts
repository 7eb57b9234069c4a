import { keyModeName, scopeName, type identityV1 } from "@c402/contracts";
import { isoOrNull } from "./values";

/** The public JSON shape of API keys. */

export function apiKeyView(k: identityV1.ApiKey) {
  return {
    id: k.id,
    object: "api_key",
    name: k.name ?? null,
    prefix: k.prefix,
    scope: scopeName(k.scope) ?? "unknown",
    mode: keyModeName(k.mode) ?? "unknown",
    created_at: isoOrNull(k.createdAt),
    last_used_at: isoOrNull(k.lastUsedAt),
    revoked_at: isoOrNull(k.revokedAt),
  };
}

/** A key just minted (POST /v1/keys, or the first wallet sign-in), with its secret: the only time it is shown. */
export function newApiKeyView(k: identityV1.ApiKey, secret: string | undefined) {
  return { ...apiKeyView(k), secret, note: "Shown once. Store it now; only its prefix can be listed later." };
}
