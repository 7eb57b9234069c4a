import type { Selectable } from "kysely";
import type { IdentityDb } from "./identity-store";

export interface EmbedSettingsTable {
  account_id: string;
  /** Origins (`https://shop.example`), normalised and without duplicates, in the order the seller gave them. */
  embed_origins: string[];
  updated_at: Date;
}

export type EmbedSettingsRow = Selectable<EmbedSettingsTable>;

export const embedStore = {
  find: (db: IdentityDb, accountId: string) => db.selectFrom("embed_settings").selectAll().where("account_id", "=", accountId).executeTakeFirst(),

  /** The account's settings, locked for a change in the caller's transaction. */
  lock: (db: IdentityDb, accountId: string) => db.selectFrom("embed_settings").selectAll().where("account_id", "=", accountId).forUpdate().executeTakeFirst(),

  upsert: (db: IdentityDb, row: EmbedSettingsRow) => {
    const values = { ...row, embed_origins: JSON.stringify(row.embed_origins) } as never;
    return db
      .insertInto("embed_settings")
      .values(values)
      .onConflict((oc) => oc.column("account_id").doUpdateSet({ embed_origins: JSON.stringify(row.embed_origins) as never, updated_at: row.updated_at }))
      .execute();
  },
};
