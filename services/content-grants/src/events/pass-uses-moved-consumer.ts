import { fromBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { idempotentConsumer, type Bus, type Subscription } from "@c402/bus";
import { contentGrantsEventsV1, TOPICS } from "@c402/contracts";
import { passStore, type ContentGrantsDb } from "../store/pass-store";

export const PASS_USES_MOVED_CONSUMER = "content-grants.pass-uses-moved";

/** Takes in the read counts identity held before this service owned them (identity's migration 0014), each event once. */
export function subscribePassUsesMoved(bus: Bus, db: ContentGrantsDb): Promise<Subscription> {
  return bus.subscribe({
    topic: TOPICS.passUsesMoved,
    group: PASS_USES_MOVED_CONSUMER,
    handler: idempotentConsumer(db, PASS_USES_MOVED_CONSUMER, async (trx, envelope) => {
      const moved = fromBinary(contentGrantsEventsV1.PassUsesMovedSchema, envelope.payload);
      for (const use of moved.uses) {
        if (use.expiresAt) await passStore.addMovedUse(trx as ContentGrantsDb, use.passId, use.used, timestampDate(use.expiresAt));
      }
    }),
  });
}
