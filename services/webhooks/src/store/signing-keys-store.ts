import type { SigningKeyRow, WebhooksDb } from "./webhooks-store";

export const signingKeysStore = {
  /** The keys that sign now: the newest, and any predecessor still inside its overlap. */
  signing: (db: WebhooksDb, now: Date): Promise<SigningKeyRow[]> =>
    db
      .selectFrom("signing_keys")
      .selectAll()
      .where((eb) => eb.or([eb("retires_at", "is", null), eb("retires_at", ">", now)]))
      .orderBy("generation", "desc")
      .execute(),
  newest: (db: WebhooksDb) => db.selectFrom("signing_keys").selectAll().orderBy("generation", "desc").limit(1).executeTakeFirst(),
  /** Inserts a key of the next generation; false when another replica inserted that generation first. */
  async insert(db: WebhooksDb, row: SigningKeyRow): Promise<boolean> {
    const r = await db
      .insertInto("signing_keys")
      .values({ ...row, public_key: Buffer.from(row.public_key) })
      .onConflict((oc) => oc.column("generation").doNothing())
      .returning("id")
      .executeTakeFirst();
    return r !== undefined;
  },
  /** Starts the overlap of the keys that sign with no end yet (all but the one just inserted). */
  retireOthers: (db: WebhooksDb, keepId: string, retiresAt: Date) =>
    db.updateTable("signing_keys").set({ retires_at: retiresAt }).where("id", "!=", keepId).where("retires_at", "is", null).execute(),
};
