import type { Selectable } from "kysely";
import type { IdentityDb } from "./identity-store";

export interface MagicLinksTable {
  /** SHA-256 (hex) of the link's token: the token itself is never stored. */
  token_hash: string;
  email: string;
  /** A path on this site to land on after signing in; null for the default. */
  return_to: string | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export type MagicLinkRow = Selectable<MagicLinksTable>;

export const magicLinkStore = {
  insert: (db: IdentityDb, row: Omit<MagicLinkRow, "used_at">) => db.insertInto("magic_links").values(row).execute(),

  /**
   * Marks an unexpired, unused link used and answers it; undefined when there
   * is no such link or it cannot be claimed. One UPDATE, so of two consumers
   * racing on one link exactly one gets it (the second waits on the row lock,
   * then sees `used_at` set).
   */
  claim: (db: IdentityDb, tokenHash: string, now: Date) =>
    db
      .updateTable("magic_links")
      .set({ used_at: now })
      .where("token_hash", "=", tokenHash)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .returningAll()
      .executeTakeFirst(),

  /** Deletes at most `limit` expired links (used or not), like the challenges' purge. */
  deleteExpired: async (db: IdentityDb, now: Date, limit: number) => {
    const r = await db
      .deleteFrom("magic_links")
      .where("token_hash", "in", (eb) => eb.selectFrom("magic_links").select("token_hash").where("expires_at", "<=", now).limit(limit))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  },

  findAccountByEmail: (db: IdentityDb, email: string) => db.selectFrom("accounts").selectAll().where("email", "=", email).executeTakeFirst(),

  /**
   * Creates the address's account unless one exists; answers whether this
   * call created it. A verify racing on the same new address waits on the
   * unique index and then inserts nothing, so one address is one account.
   */
  insertAccountForEmail: async (db: IdentityDb, row: { id: string; email: string; created_at: Date }) => {
    const r = await db
      .insertInto("accounts")
      .values(row)
      .onConflict((oc) => oc.column("email").doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  },
};
