import type { Selectable } from "kysely";
import type { IdentityDb } from "./identity-store";

export interface OAuthClientsTable {
  id: string;
  name: string | null;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: string;
  application_type: string;
  scope: string | null;
  /** SHA-256 (hex) of a confidential client's secret; null for a public client. */
  secret_hash: string | null;
  created_at: Date;
}
export type OAuthClientRow = Selectable<OAuthClientsTable>;

export interface OAuthRequestsTable {
  id: string;
  client_id: string;
  account_id: string;
  session_id: string;
  redirect_uri: string;
  scopes: string[];
  resource: string;
  code_challenge: string;
  state: string | null;
  csrf_hash: string;
  expires_at: Date;
}
export type OAuthRequestRow = Selectable<OAuthRequestsTable>;

export interface OAuthGrantsTable {
  id: string;
  account_id: string;
  client_id: string;
  scopes: string[];
  resource: string;
  created_at: Date;
  revoked_at: Date | null;
  revoked_because: string | null;
}
export type OAuthGrantRow = Selectable<OAuthGrantsTable>;

export interface OAuthCodesTable {
  code_hash: string;
  grant_id: string;
  redirect_uri: string;
  code_challenge: string;
  expires_at: Date;
  spent_at: Date | null;
}
export type OAuthCodeRow = Selectable<OAuthCodesTable>;

export type OAuthTokenKind = "access" | "refresh";
export interface OAuthTokensTable {
  token_hash: string;
  grant_id: string;
  kind: OAuthTokenKind;
  created_at: Date;
  expires_at: Date;
  spent_at: Date | null;
}
export type OAuthTokenRow = Selectable<OAuthTokensTable>;

const json = (value: unknown) => JSON.stringify(value);

/** Deletes at most `limit` rows of `table` whose `expires_at` has passed (bounded, like the sessions' purge). */
async function purgeExpired(db: IdentityDb, table: "oauth_requests" | "oauth_codes" | "oauth_tokens", now: Date, limit: number) {
  const key = table === "oauth_requests" ? "id" : table === "oauth_codes" ? "code_hash" : "token_hash";
  // The three tables share the shape this needs; kysely cannot see that through the union.
  const r = await (db as unknown as IdentityDb)
    .deleteFrom(table as "oauth_tokens")
    .where(key as "token_hash", "in", (eb) =>
      eb
        .selectFrom(table as "oauth_tokens")
        .select(key as "token_hash")
        .where("expires_at", "<=", now)
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

export const oauthStore = {
  insertClient: (db: IdentityDb, row: OAuthClientRow) =>
    db
      .insertInto("oauth_clients")
      .values({ ...row, redirect_uris: json(row.redirect_uris), grant_types: json(row.grant_types), response_types: json(row.response_types) } as never)
      .returningAll()
      .executeTakeFirstOrThrow(),

  /**
   * Deletes at most `limit` clients registered before `before` that never got
   * a grant and have no consent waiting: open registration must not grow the
   * table without bound. A client that ever connected stays.
   */
  deleteAbandonedClients: async (db: IdentityDb, before: Date, limit: number) => {
    const r = await db
      .deleteFrom("oauth_clients")
      .where("id", "in", (eb) =>
        eb
          .selectFrom("oauth_clients as c")
          .select("c.id")
          .where("c.created_at", "<", before)
          .where((w) => w.not(w.exists(w.selectFrom("oauth_grants as g").select("g.id").whereRef("g.client_id", "=", "c.id"))))
          .where((w) => w.not(w.exists(w.selectFrom("oauth_requests as r").select("r.id").whereRef("r.client_id", "=", "c.id"))))
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  },

  findClient: (db: IdentityDb, id: string) => db.selectFrom("oauth_clients").selectAll().where("id", "=", id).executeTakeFirst(),

  insertRequest: (db: IdentityDb, row: OAuthRequestRow) =>
    db
      .insertInto("oauth_requests")
      .values({ ...row, scopes: json(row.scopes) } as never)
      .execute(),

  lockRequest: (db: IdentityDb, id: string) => db.selectFrom("oauth_requests").selectAll().where("id", "=", id).forUpdate().executeTakeFirst(),

  /** Deletes the request and answers it: a consent decides it once (of two racing, one gets it). */
  takeRequest: (db: IdentityDb, id: string) => db.deleteFrom("oauth_requests").where("id", "=", id).returningAll().executeTakeFirst(),

  insertGrant: (db: IdentityDb, row: OAuthGrantRow) =>
    db
      .insertInto("oauth_grants")
      .values({ ...row, scopes: json(row.scopes) } as never)
      .execute(),

  lockGrant: (db: IdentityDb, id: string) => db.selectFrom("oauth_grants").selectAll().where("id", "=", id).forUpdate().executeTakeFirst(),

  findGrant: (db: IdentityDb, id: string) => db.selectFrom("oauth_grants").selectAll().where("id", "=", id).executeTakeFirst(),

  /** Revokes the grant unless it already is; answers whether this call revoked it. */
  revokeGrant: async (db: IdentityDb, id: string, at: Date, because: string) => {
    const r = await db
      .updateTable("oauth_grants")
      .set({ revoked_at: at, revoked_because: because })
      .where("id", "=", id)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  insertCode: (db: IdentityDb, row: OAuthCodeRow) => db.insertInto("oauth_codes").values(row).execute(),

  lockCode: (db: IdentityDb, hash: string) => db.selectFrom("oauth_codes").selectAll().where("code_hash", "=", hash).forUpdate().executeTakeFirst(),

  spendCode: (db: IdentityDb, hash: string, at: Date) => db.updateTable("oauth_codes").set({ spent_at: at }).where("code_hash", "=", hash).execute(),

  insertToken: (db: IdentityDb, row: OAuthTokenRow) => db.insertInto("oauth_tokens").values(row).execute(),

  findToken: (db: IdentityDb, hash: string) => db.selectFrom("oauth_tokens").selectAll().where("token_hash", "=", hash).executeTakeFirst(),

  lockToken: (db: IdentityDb, hash: string) => db.selectFrom("oauth_tokens").selectAll().where("token_hash", "=", hash).forUpdate().executeTakeFirst(),

  spendToken: (db: IdentityDb, hash: string, at: Date) => db.updateTable("oauth_tokens").set({ spent_at: at }).where("token_hash", "=", hash).execute(),

  purgeExpired,
};
