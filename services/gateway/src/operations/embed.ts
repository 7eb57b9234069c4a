import { ensureScope, type Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import type { EmbedOrigins } from "../http/embed-origins";
import { validateBody } from "../http/validate";

/** What GET and PUT /v1/account/embed (and the MCP tools get_embed_settings, set_embed_settings) answer. */
function embedSettingsView(origins: readonly string[]) {
  return {
    object: "embed_settings",
    embed_origins: [...origins],
    note:
      origins.length === 0
        ? "No origin is allowlisted: nothing may frame your pay pages or receipts."
        : "These origins may frame your pay pages (/c/{id}, /c/{id}/test) and receipts (/r/{id}); no other site may.",
  };
}

/** The embed settings: reading takes any seller credential; changing which sites may show your pages is an account setting (full). */
export class EmbedOperations {
  constructor(
    private readonly deps: Pick<GatewayDeps, "clients">,
    private readonly origins: EmbedOrigins,
  ) {}

  async get(cred: Credential) {
    ensureScope(cred, "read_only");
    const r = await this.deps.clients.identity.getEmbedSettings({ accountId: cred.accountId });
    return embedSettingsView(r.embedOrigins);
  }

  async put(cred: Credential, raw: unknown) {
    ensureScope(cred, "full");
    const body = validateBody("EmbedSettingsPut", raw);
    const r = await this.deps.clients.identity.putEmbedSettings({ accountId: cred.accountId, embedOrigins: body.embed_origins as string[], actor: cred.actor });
    await this.origins.remember(cred.accountId, r.embedOrigins);
    return { ...embedSettingsView(r.embedOrigins), changed: r.changed };
  }
}
