import { fromBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { decodeEnvelope } from "@c402/bus";
import { accountEventsV1 } from "@c402/contracts";
import type { Kysely } from "@c402/db";

/** The account events catalog wrote to its outbox about one object, oldest first, decoded. */
export async function activityOf(db: Kysely<any>, objectId: string) {
  const rows = await db.selectFrom("outbox").select(["payload", "topic"]).where("key", "=", objectId).orderBy("seq").execute();
  return rows.map((r: { payload: Buffer }) => {
    const envelope = decodeEnvelope(new Uint8Array(r.payload));
    const activity = fromBinary(accountEventsV1.AccountActivitySchema, envelope.payload);
    return {
      accountId: envelope.accountId,
      testMode: envelope.testMode,
      at: envelope.occurredAt ? timestampDate(envelope.occurredAt) : undefined,
      action: activity.action,
      objectId: activity.objectId,
      actor: activity.actor,
      detail: JSON.parse(activity.detailJson) as Record<string, unknown>,
    };
  });
}
