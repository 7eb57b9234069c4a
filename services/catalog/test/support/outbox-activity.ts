import { accountActivityOf } from "@c402/account-events";
import { decodeEnvelope } from "@c402/bus";
import type { Kysely } from "@c402/db";

/** The account events catalog wrote to its outbox about one object, oldest first, decoded as identity reads them. */
export async function activityOf(db: Kysely<any>, objectId: string) {
  const rows = await db.selectFrom("outbox").select(["payload", "topic"]).where("key", "=", objectId).orderBy("seq").execute();
  return rows.map((r: { payload: Buffer }) => {
    const { accountId, testMode, at, action, objectId: object, actor, detail } = accountActivityOf(decodeEnvelope(new Uint8Array(r.payload)));
    return { accountId, testMode, at, action, objectId: object, actor, detail };
  });
}
