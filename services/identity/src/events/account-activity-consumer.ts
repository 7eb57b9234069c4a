import { decodeEnvelope, type Bus, type Subscription } from "@c402/bus";
import { TOPICS } from "@c402/contracts";
import { rowFromEnvelope } from "../domain/account-events";
import { identityStore, type IdentityDb } from "../store/identity-store";

export const IDENTITY_ACTIVITY_CONSUMER = "identity.account-activity";

/**
 * Records the account events other services wrote to their outboxes. The row's
 * id is the event id, so a redelivered event is recorded once without a
 * processed-events table. A message that cannot be read (not an envelope, an
 * actor no producer may write) never will be: it is logged and skipped rather
 * than retried forever; a database failure is retried.
 */
export function subscribeAccountActivity(bus: Bus, db: IdentityDb, onMalformed: (err: unknown) => void): Promise<Subscription> {
  return bus.subscribe({
    topic: TOPICS.accountActivity,
    group: IDENTITY_ACTIVITY_CONSUMER,
    handler: async (message) => {
      let row;
      try {
        row = rowFromEnvelope(decodeEnvelope(message.value));
      } catch (err) {
        onMalformed(err);
        return;
      }
      await identityStore.insertAccountEvent(db, row);
    },
  });
}
