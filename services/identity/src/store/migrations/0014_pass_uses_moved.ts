import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { outboxRow } from "@c402/bus";
import { contentGrantsEventsV1, EVENT_TYPES, TOPICS } from "@c402/contracts";
import type { Migration } from "@c402/db";

/** Pass-use counts per event: a few dozen bytes each, so a batch stays far below the bus's message limit. */
const PER_EVENT = 500;

/**
 * Passes moved to content-grants (issue 44). The read counts of limited passes
 * identity kept go to it as `pass_uses.moved` events written to identity's
 * outbox, and the table is dropped, in this migration's one transaction: a
 * count is either still here or on its way, never lost. content-grants adds each
 * count to its own (reads it counted meanwhile stay counted), once per event.
 * Counts of passes that already expired are left behind: they open nothing.
 */
export const passUsesMoved: Migration = {
  async up(db) {
    const now = new Date();
    // A page per event, in pass-id order: the table is never held in memory whole.
    for (let after = ""; ;) {
      const batch: { pass_id: string; used: number; expires_at: Date }[] = await db
        .selectFrom("pass_uses")
        .select(["pass_id", "used", "expires_at"])
        .where("expires_at", ">", now)
        .where("pass_id", ">", after)
        .orderBy("pass_id")
        .limit(PER_EVENT)
        .execute();
      const [first, last] = [batch[0], batch.at(-1)];
      if (first === undefined || last === undefined) break;
      after = last.pass_id;
      const moved = create(contentGrantsEventsV1.PassUsesMovedSchema, {
        uses: batch.map((r) => ({ passId: r.pass_id, used: r.used, expiresAt: timestampFromDate(new Date(r.expires_at)) })),
      });
      const row = outboxRow({
        topic: TOPICS.passUsesMoved,
        type: EVENT_TYPES.passUsesMoved,
        // Not an account's change: the counts of many sellers' passes.
        accountId: "",
        testMode: false,
        aggregateId: first.pass_id,
        payload: toBinary(contentGrantsEventsV1.PassUsesMovedSchema, moved),
      });
      await db.insertInto("outbox").values(row).execute();
    }
    await db.schema.dropTable("pass_uses").execute();
  },
};
