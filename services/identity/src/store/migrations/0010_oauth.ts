import { sql, type Migration } from "@c402/db";

/**
 * The OAuth 2.1 authorization server (docs/adr/0012-oauth-server.md).
 *
 * - `oauth_clients`: dynamically registered clients (RFC 7591). A public
 *   client has no secret; a confidential one keeps the SHA-256 of its secret.
 * - `oauth_requests`: an authorization request waiting for the signed-in
 *   user's consent, bound to that session and carrying every parameter
 *   (the consent form sends only the request id and its CSRF token).
 * - `oauth_grants`: what a user consented to, for one client: the scopes and
 *   the resource. Every code and token hangs off one grant; revoking the grant
 *   (a reused code or refresh token, a revocation request) ends them all.
 * - `oauth_codes` and `oauth_tokens`: stored by the SHA-256 of their value
 *   only. A code and a refresh token are spent once (`spent_at`) and kept
 *   until they expire, so a second use is recognised as a replay.
 */
export const oauth: Migration = {
  async up(db) {
    await db.schema
      .createTable("oauth_clients")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("name", "text")
      .addColumn("redirect_uris", "jsonb", (c) => c.notNull())
      .addColumn("grant_types", "jsonb", (c) => c.notNull())
      .addColumn("response_types", "jsonb", (c) => c.notNull())
      .addColumn("token_endpoint_auth_method", "text", (c) => c.notNull())
      .addColumn("application_type", "text", (c) => c.notNull())
      .addColumn("scope", "text")
      .addColumn("secret_hash", "text")
      .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
      .addCheckConstraint("oauth_clients_auth_method", sql`token_endpoint_auth_method in ('none', 'client_secret_basic', 'client_secret_post')`)
      .addCheckConstraint("oauth_clients_secret", sql`(token_endpoint_auth_method = 'none') = (secret_hash is null)`)
      .execute();
    await db.schema
      .createTable("oauth_requests")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("client_id", "text", (c) => c.notNull().references("oauth_clients.id"))
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("redirect_uri", "text", (c) => c.notNull())
      .addColumn("scopes", "jsonb", (c) => c.notNull())
      .addColumn("resource", "text", (c) => c.notNull())
      .addColumn("code_challenge", "text", (c) => c.notNull())
      .addColumn("state", "text")
      .addColumn("csrf_hash", "text", (c) => c.notNull())
      .addColumn("expires_at", "timestamptz(3)", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("oauth_requests_expiry").on("oauth_requests").column("expires_at").execute();
    await db.schema
      .createTable("oauth_grants")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("client_id", "text", (c) => c.notNull().references("oauth_clients.id"))
      .addColumn("scopes", "jsonb", (c) => c.notNull())
      .addColumn("resource", "text", (c) => c.notNull())
      .addColumn("created_at", "timestamptz(3)", (c) => c.notNull())
      .addColumn("revoked_at", "timestamptz(3)")
      .addColumn("revoked_because", "text")
      .execute();
    await db.schema.createIndex("oauth_grants_account").on("oauth_grants").columns(["account_id", "created_at"]).execute();
    await db.schema
      .createTable("oauth_codes")
      .addColumn("code_hash", "text", (c) => c.primaryKey())
      .addColumn("grant_id", "text", (c) => c.notNull().references("oauth_grants.id"))
      .addColumn("redirect_uri", "text", (c) => c.notNull())
      .addColumn("code_challenge", "text", (c) => c.notNull())
      .addColumn("expires_at", "timestamptz(3)", (c) => c.notNull())
      .addColumn("spent_at", "timestamptz(3)")
      .execute();
    await db.schema.createIndex("oauth_codes_expiry").on("oauth_codes").column("expires_at").execute();
    await db.schema
      .createTable("oauth_tokens")
      .addColumn("token_hash", "text", (c) => c.primaryKey())
      .addColumn("grant_id", "text", (c) => c.notNull().references("oauth_grants.id"))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("created_at", "timestamptz(3)", (c) => c.notNull())
      .addColumn("expires_at", "timestamptz(3)", (c) => c.notNull())
      .addColumn("spent_at", "timestamptz(3)")
      .addCheckConstraint("oauth_tokens_kind", sql`kind in ('access', 'refresh')`)
      .execute();
    await db.schema.createIndex("oauth_tokens_grant").on("oauth_tokens").column("grant_id").execute();
    await db.schema.createIndex("oauth_tokens_expiry").on("oauth_tokens").column("expires_at").execute();
  },
};
