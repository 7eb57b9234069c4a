import type { Selectable } from "kysely";
import type { IdentityDb } from "./identity-store";

export interface PlatformSettingsTable {
  account_id: string;
  platform_account: boolean;
  platform_fee_bps: number;
  /** The EVM wallet the platform cut is paid to; null when the account takes no cut. */
  platform_fee_to: string | null;
  updated_at: Date;
}

export type PlatformSettingsRow = Selectable<PlatformSettingsTable>;

export const platformStore = {
  find: (db: IdentityDb, accountId: string) => db.selectFrom("platform_settings").selectAll().where("account_id", "=", accountId).executeTakeFirst(),

  /** The account's settings, locked for a change in the caller's transaction. */
  lock: (db: IdentityDb, accountId: string) =>
    db.selectFrom("platform_settings").selectAll().where("account_id", "=", accountId).forUpdate().executeTakeFirst(),

  upsert: (db: IdentityDb, row: PlatformSettingsRow) =>
    db
      .insertInto("platform_settings")
      .values(row)
      .onConflict((oc) =>
        oc.column("account_id").doUpdateSet({
          platform_account: row.platform_account,
          platform_fee_bps: row.platform_fee_bps,
          platform_fee_to: row.platform_fee_to,
          updated_at: row.updated_at,
        }),
      )
      .execute(),
};
