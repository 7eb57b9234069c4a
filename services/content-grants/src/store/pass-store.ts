import { sql, type Kysely } from "kysely";

/** content-grants' schema: the read counts of limited passes, and the bus's outbox and processed events. */
export type ContentGrantsDb = Kysely<{ pass_uses: PassUsesTable }>;

export interface PassUsesTable {
  /** The pass's own random id (its `j`), never the pass itself. */
  pass_id: string;
  used: number;
  expires_at: Date;
}

export const passStore = {
  /**
   * Counts one read of a limited pass in one statement, so concurrent reads
   * never count past the limit: the new count, or undefined when the pass
   * had already opened `limit` reads.
   */
  async countUse(db: ContentGrantsDb, passId: string, limit: number, expiresAt: Date): Promise<number | undefined> {
    const row = await db
      .insertInto("pass_uses")
      .values({ pass_id: passId, used: 1, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .column("pass_id")
          .doUpdateSet({ used: sql<number>`pass_uses.used + 1` })
          .where("pass_uses.used", "<", limit),
      )
      .returning("used")
      .executeTakeFirst();
    return row?.used;
  },

  /** Gives one counted read back (never below none); true when one was. */
  async returnUse(db: ContentGrantsDb, passId: string): Promise<boolean> {
    const r = await db
      .updateTable("pass_uses")
      .set({ used: sql<number>`used - 1` })
      .where("pass_id", "=", passId)
      .where("used", ">", 0)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  },

  /**
   * Adds a count identity held before this service owned pass uses (issue
   * 44's move): reads counted here meanwhile stay counted beside it.
   */
  async addMovedUse(db: ContentGrantsDb, passId: string, used: number, expiresAt: Date): Promise<void> {
    await db
      .insertInto("pass_uses")
      .values({ pass_id: passId, used, expires_at: expiresAt })
      .onConflict((oc) => oc.column("pass_id").doUpdateSet({ used: sql<number>`pass_uses.used + excluded.used` }))
      .execute();
  },

  /** Drops up to `limit` rows of passes that expired before `now`. */
  async purgeExpired(db: ContentGrantsDb, now: Date, limit: number): Promise<void> {
    await db
      .deleteFrom("pass_uses")
      .where("pass_id", "in", (eb) => eb.selectFrom("pass_uses").select("pass_id").where("expires_at", "<", now).limit(limit))
      .execute();
  },
};
