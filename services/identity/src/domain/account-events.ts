import { accountActivityOf, type AccountActivity } from "@c402/account-events";
import type { eventsV1 } from "@c402/contracts";
import { isId, newId } from "@c402/ids";
import { invalid } from "@c402/problems";
import { identityStore as store, type AccountEventPage, type AccountEventRow, type IdentityDb } from "../store/identity-store";

/** The most events one list call answers, whoever asks (the gateway asks at most 201). */
export const EVENTS_PAGE_SIZE_MAX = 1000;

/** Records one of identity's own changes, in the caller's transaction (the one that makes the change). */
export function recordActivity(db: IdentityDb, activity: AccountActivity): Promise<unknown> {
  return store.insertAccountEvent(db, {
    id: newId("event"),
    account_id: activity.accountId,
    action: activity.action,
    object_id: activity.objectId,
    detail: activity.detail,
    actor: activity.actor,
    test_mode: activity.testMode,
    at: activity.at,
  });
}

/**
 * The row of another service's account event as it arrived from the bus. Its
 * id is the event id, so a redelivery records nothing new. An actor the
 * producer could not name is refused here, loudly, rather than recorded.
 */
export function rowFromEnvelope(envelope: eventsV1.EventEnvelope): AccountEventRow {
  const a = accountActivityOf(envelope);
  return { id: a.eventId, account_id: a.accountId, action: a.action, object_id: a.objectId, detail: a.detail, actor: a.actor, test_mode: a.testMode, at: a.at };
}

export interface EventsQuery {
  size: number;
  actionPrefix?: string;
  beforeEventId?: string;
  beforeAt?: Date;
}

/** One page of the account's events, newest first; `before` an event of another account is refused like an unknown one. */
export async function listAccountEvents(db: IdentityDb, accountId: string, query: EventsQuery): Promise<AccountEventRow[]> {
  if (!Number.isInteger(query.size) || query.size < 1 || query.size > EVENTS_PAGE_SIZE_MAX) {
    throw invalid([{ field: "page_size", reason: `must be from 1 to ${EVENTS_PAGE_SIZE_MAX}` }]);
  }
  const page: AccountEventPage = { size: query.size, ...(query.actionPrefix ? { actionPrefix: query.actionPrefix } : {}) };
  if (query.beforeEventId !== undefined) {
    const event = isId("event", query.beforeEventId) ? await store.findAccountEvent(db, accountId, query.beforeEventId) : undefined;
    if (!event) throw invalid([{ field: "before", reason: "names no event of this account (send an event id from a previous page, or an ISO 8601 time)" }]);
    page.before = { at: event.at, id: event.id };
  } else if (query.beforeAt !== undefined) page.before = { at: query.beforeAt };
  return store.listAccountEvents(db, accountId, page);
}
