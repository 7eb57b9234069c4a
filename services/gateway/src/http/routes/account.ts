import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { isId } from "@c402/ids";
import { invalid, type FieldError } from "@c402/problems";
import { Router } from "express";
import { accountEventView } from "../../views/account-events";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { pageLimitOf } from "../pagination";

/** /v1/account/*: the seller's account (its event log so far). */

/** An action prefix: what actions are made of (`checkout.voided`), up to 100 characters. */
const ACTION_PREFIX = /^[a-z_.]{1,100}$/;
/** An ISO 8601 instant with a date and a time (a bare date is ambiguous about its zone). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/;

interface EventsQuery {
  limit: number;
  action?: string;
  before?: { eventId: string } | { at: Date };
}

/**
 * The spec's account-events query: `limit` (default 50, at most 200),
 * `action` (a prefix) and `before` (an event id from a previous page, or an
 * ISO 8601 instant). 422 naming each malformed parameter.
 */
function eventsQueryOf(query: Record<string, unknown>): EventsQuery {
  const errors: FieldError[] = [];
  const out: EventsQuery = { limit: pageLimitOf(query, errors) };
  if (query.action !== undefined) {
    if (typeof query.action !== "string" || !ACTION_PREFIX.test(query.action)) {
      errors.push({ field: "action", reason: "must be an action or its prefix (lowercase letters, `_` and `.`, up to 100)" });
    } else out.action = query.action;
  }
  if (query.before !== undefined) {
    const raw = query.before;
    const at = typeof raw === "string" && ISO_INSTANT.test(raw) ? new Date(raw) : undefined;
    if (typeof raw === "string" && isId("event", raw)) out.before = { eventId: raw };
    else if (at && !Number.isNaN(at.getTime())) out.before = { at };
    else errors.push({ field: "before", reason: "must be an event id (evt_…) from a previous page or an ISO 8601 time with its zone" });
  }
  if (errors.length) throw invalid(errors, "Invalid query.");
  return out;
}

export function accountRoutes({ clients }: GatewayDeps): Router {
  const router = Router();

  router.get("/v1/account/events", requireScope(clients, "read_only"), async (req, res) => {
    const q = eventsQueryOf(req.query);
    const before = q.before;
    const r = await clients.identity.listAccountEvents({
      accountId: credentialOf(req).accountId,
      // One more than shown, to learn whether there are more.
      pageSize: q.limit + 1,
      ...(q.action !== undefined ? { actionPrefix: q.action } : {}),
      ...(before
        ? { before: "eventId" in before ? { case: "beforeEventId", value: before.eventId } : { case: "beforeAt", value: timestampFromDate(before.at) } }
        : {}),
    });
    const events = r.events.slice(0, q.limit);
    const hasMore = r.events.length > q.limit;
    res.json({
      events: events.map(accountEventView),
      has_more: hasMore,
      next_before: hasMore ? (events[events.length - 1]?.id ?? null) : null,
    });
  });

  return router;
}
