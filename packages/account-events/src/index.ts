import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { outboxRow, type OutboxRow } from "@c402/bus";
import { accountEventsV1, EVENT_TYPES, TOPICS, type eventsV1 } from "@c402/contracts";
import { invalid } from "@c402/problems";

/**
 * Account events: one row per state change of a seller's account, in every
 * service (GET /v1/account/events). Identity owns the rows. Identity writes
 * its own changes' rows in the change's transaction; every other service
 * writes `accountActivityRow` to its outbox in the change's transaction, and
 * identity records it from the bus (deduplicated by event id). Either way the
 * change and its event commit together: no second write that can be lost.
 */

/** Every action an account event can name, `<object>.<verb>` (docs/account-events.md lists them with their detail). */
export const ACCOUNT_ACTIONS = [
  "account.created",
  "session.opened",
  "session.ended",
  "key.created",
  "key.revoked",
  "profile.updated",
  "wallets.updated",
  "platform.updated",
  "embed.updated",
  "checkout.created",
  "checkout.live",
  "checkout.updated",
  "checkout.voided",
  "checkout.restored",
  "checkout.extended",
  "checkout.expired",
  "checkout.payouts_added",
  "report.filed",
  "report.updated",
  "origin_key.created",
  "origin_key.rotated",
  "origin_key.revoked",
  "receipt.fulfilled",
  "webhook.created",
  "webhook.rekeyed",
  "webhook.deleted",
  "webhook.disabled",
  "oauth.granted",
  "oauth.revoked",
  "pass.issued",
  "escrow_settings.updated",
  "spending_wallet.created",
  "spending_wallet.revealed",
  "spending_wallet.archived",
  "spending_wallet.limits_updated",
] as const;
export type AccountAction = (typeof ACCOUNT_ACTIONS)[number];

/**
 * Who made a change: a browser session, an API key by its listed prefix, an
 * OAuth client, a wallet session, or the service itself (a deadline passing).
 */
export type Actor = "session" | "wallet" | "system" | `key:${string}` | `oauth:${string}`;

const ACTOR = /^(?:session|wallet|system|key:[A-Za-z0-9_]{1,64}|oauth:[A-Za-z0-9_.:-]{1,128})$/;

export function isActor(text: string): text is Actor {
  return ACTOR.test(text);
}

/** The actor an event carried, checked: a service never records an actor it cannot name. */
export function actorOf(text: string): Actor {
  if (!isActor(text)) throw new RangeError(`not an account event actor: ${JSON.stringify(text.slice(0, 80))}`);
  return text;
}

/** The actor an RPC request names; 422 for text that names none (the contracts bound only its length). */
export function actorOfRequest(text: string): Actor {
  if (!isActor(text)) throw invalid([{ field: "actor", reason: "must be session, wallet, system, key:<prefix> or oauth:<client>" }]);
  return text;
}

export interface AccountActivity {
  accountId: string;
  action: AccountAction;
  objectId: string;
  /** The change's particulars: small, never a secret. */
  detail: Record<string, unknown>;
  actor: Actor;
  /** The change concerns rehearsal (a test key, an unarmed checkout). */
  testMode: boolean;
  at: Date;
}

/** The outbox row of an account event, for a service other than identity to write in the change's transaction. */
export function accountActivityRow(activity: AccountActivity): OutboxRow {
  return outboxRow({
    topic: TOPICS.accountActivity,
    type: EVENT_TYPES.accountActivity,
    accountId: activity.accountId,
    testMode: activity.testMode,
    aggregateId: activity.objectId,
    occurredAt: activity.at,
    payload: toBinary(
      accountEventsV1.AccountActivitySchema,
      create(accountEventsV1.AccountActivitySchema, {
        action: activity.action,
        objectId: activity.objectId,
        detailJson: JSON.stringify(activity.detail),
        actor: activity.actor,
      }),
    ),
  });
}

/**
 * The account event an envelope carries (what `accountActivityRow` wrote), its
 * actor checked: `RangeError` for one no producer may write. A detail that is
 * not an object is kept as `{ value }`.
 */
export function accountActivityOf(envelope: eventsV1.EventEnvelope): AccountActivity & { eventId: string; action: string } {
  const activity = fromBinary(accountEventsV1.AccountActivitySchema, envelope.payload);
  const detail: unknown = JSON.parse(activity.detailJson || "{}");
  return {
    eventId: envelope.eventId,
    accountId: envelope.accountId,
    action: activity.action as AccountAction,
    objectId: activity.objectId,
    detail: detail && typeof detail === "object" && !Array.isArray(detail) ? (detail as Record<string, unknown>) : { value: detail },
    actor: actorOf(activity.actor),
    testMode: envelope.testMode,
    at: envelope.occurredAt ? timestampDate(envelope.occurredAt) : new Date(),
  };
}
