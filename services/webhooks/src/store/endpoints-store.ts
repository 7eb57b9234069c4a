import { sql } from "kysely";
import type { EndpointRow, PageQuery, WebhooksDb } from "./webhooks-store";

/** A receiver as its seller may see it: everything but the sealed secret, with how many deliveries are still due. */
export type EndpointView = Omit<EndpointRow, "sealed_secret"> & { pending_deliveries: bigint | null };

const shownColumns = [
  "e.id",
  "e.account_id",
  "e.url",
  "e.events",
  "e.active",
  "e.disabled_reason",
  "e.disabled_at",
  "e.consecutive_failures",
  "e.failed_attempts",
  "e.failed_deliveries",
  "e.delivered",
  "e.last_success_at",
  "e.last_failure_at",
  "e.created_at",
  "e.rekeyed_at",
] as const;

function shown(db: WebhooksDb) {
  return db
    .selectFrom("endpoints as e")
    .select(shownColumns)
    .select((eb) =>
      eb
        .selectFrom("deliveries as d")
        .select(sql<bigint>`count(*)`.as("n"))
        .whereRef("d.endpoint_id", "=", "e.id")
        .where("d.status", "=", "pending")
        .as("pending_deliveries"),
    );
}

export const endpointsStore = {
  /** Makes the account's registrations in this transaction wait for each other (released at commit or rollback). */
  lockAccount: (db: WebhooksDb, accountId: string) => sql`select pg_advisory_xact_lock(hashtext(${"webhooks:" + accountId}))`.execute(db),
  findByUrl: (db: WebhooksDb, accountId: string, url: string) =>
    db.selectFrom("endpoints").selectAll().where("account_id", "=", accountId).where("url", "=", url).executeTakeFirst(),
  countForAccount: async (db: WebhooksDb, accountId: string) =>
    Number(
      (
        await db
          .selectFrom("endpoints")
          .select(sql<string>`count(*)`.as("n"))
          .where("account_id", "=", accountId)
          .executeTakeFirstOrThrow()
      ).n,
    ),
  insert: (db: WebhooksDb, row: Omit<EndpointRow, "consecutive_failures" | "failed_attempts" | "failed_deliveries" | "delivered">) =>
    db
      .insertInto("endpoints")
      .values({ ...row, events: JSON.stringify(row.events) as unknown as string[] })
      .execute(),
  /** A re-registration: a fresh secret, the events asked for, active again, the failure counter cleared. */
  rekey: (db: WebhooksDb, id: string, change: { sealed_secret: string; events: string[]; at: Date }) =>
    db
      .updateTable("endpoints")
      .set({
        sealed_secret: change.sealed_secret,
        events: JSON.stringify(change.events) as unknown as string[],
        active: true,
        disabled_reason: null,
        disabled_at: null,
        consecutive_failures: 0,
        rekeyed_at: change.at,
      })
      .where("id", "=", id)
      .execute(),
  find: (db: WebhooksDb, accountId: string, id: string): Promise<EndpointView | undefined> =>
    shown(db).where("e.account_id", "=", accountId).where("e.id", "=", id).executeTakeFirst(),
  list: (db: WebhooksDb, accountId: string, page: PageQuery): Promise<EndpointView[]> => {
    let q = shown(db).where("e.account_id", "=", accountId);
    if (page.after) {
      const { createdAt, id } = page.after;
      q = q.where((eb) => eb.or([eb("e.created_at", "<", createdAt), eb.and([eb("e.created_at", "=", createdAt), eb("e.id", "<", id)])]));
    }
    return q.orderBy("e.created_at", "desc").orderBy("e.id", "desc").limit(page.limit).execute();
  },
  /** The active receivers of an account, with their subscriptions (the fan-out of one event). */
  delete: (db: WebhooksDb, id: string) => db.deleteFrom("endpoints").where("id", "=", id).execute(),
  disable: (db: WebhooksDb, id: string, reason: string, at: Date) =>
    db
      .updateTable("endpoints")
      .set({ active: false, disabled_reason: reason, disabled_at: at })
      .where("id", "=", id)
      .where("active", "=", true)
      .executeTakeFirst(),
};
