import { sql, type Migration } from "@c402/db";

/**
 * Seller profiles (GET and PATCH /auth/me): one row per account, written the
 * first time the seller changes it (until then the profile is the account's
 * empty one). The unique index on slug is what keeps a slug to one account,
 * also when two accounts ask for it at the same moment: the second write fails
 * on it and is answered 409. Several accounts may have no slug (NULL).
 */
export const profiles: Migration = {
  async up(db) {
    await db.schema
      .createTable("profiles")
      .addColumn("account_id", "text", (c) => c.primaryKey().references("accounts.id"))
      .addColumn("slug", "text")
      .addColumn("name", "text")
      .addColumn("profile_type", "text")
      .addColumn("bio", "text")
      .addColumn("avatar_url", "text")
      .addColumn("website_url", "text")
      .addColumn("social_links", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .addColumn("verified", "boolean", (c) => c.notNull().defaultTo(false))
      .addColumn("created_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn("updated_at", "timestamptz(3)", (c) => c.notNull().defaultTo(sql`now()`))
      .addCheckConstraint("profiles_profile_type", sql`profile_type in ('individual', 'team', 'company')`)
      .execute();
    await db.schema.createIndex("profiles_slug").on("profiles").column("slug").unique().execute();
  },
};
