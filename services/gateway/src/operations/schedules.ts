import { isId } from "@c402/ids";
import { invalid, ProblemError, type FieldError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { ensureScope, type Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import { createdAtKey, pageOf, pageRequestOf, type PageRequest } from "../http/pagination";
import { validateBody } from "../http/validate";
import { buyerCancelView, buyerScheduleView, SCHEDULE_STATUSES, scheduleSummaryView, scheduleView, sellerCancelView } from "../views/schedules";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";

/**
 * Recurring series (the schedules service's; ADR 20): the seller's list, one
 * series and its cancel; the buyer's view at /schedule/{id} and its cancel
 * (no credential: the payer's signature, or for a test-mode series its
 * address, is what the schedules service checks). Shared by the REST routes
 * and the MCP schedule tools.
 */
export class ScheduleOperations {
  constructor(private readonly deps: Pick<GatewayDeps, "clients" | "settings">) {}

  /** GET /v1/schedules: the account's series of the key's mode, newest first, paged; `checkout_id` and `status` filter. */
  async list(cred: Credential, query: Record<string, unknown>) {
    ensureScope(cred, "read_only");
    const { checkout_id: checkoutId, status, ...paging } = query;
    const errors: FieldError[] = [];
    if (checkoutId !== undefined && (typeof checkoutId !== "string" || checkoutId.length < 1 || checkoutId.length > 64)) {
      errors.push({ field: "checkout_id", reason: "must be a checkout id (chk_…)" });
    }
    if (status !== undefined && (typeof status !== "string" || !(SCHEDULE_STATUSES as readonly string[]).includes(status))) {
      errors.push({ field: "status", reason: `must be one of ${SCHEDULE_STATUSES.join(", ")}` });
    }
    let page: PageRequest | undefined;
    try {
      page = pageRequestOf(paging);
    } catch (err) {
      if (!(err instanceof ProblemError) || !err.errors) throw err;
      errors.push(...err.errors);
    }
    if (errors.length || !page) throw invalid(errors, "Invalid schedule list parameters.");
    const r = await this.deps.clients.schedules.listSchedules({
      accountId: cred.accountId,
      testMode: cred.mode === "test",
      pageSize: page.limit + 1,
      ...(typeof checkoutId === "string" ? { checkoutId } : {}),
      ...(typeof status === "string" ? { status } : {}),
      ...(page.after ? { afterCreatedAt: timestampFromDate(page.after.createdAt), afterId: page.after.id } : {}),
    });
    const { items, ...more } = pageOf(r.schedules, page.limit, createdAtKey);
    return { schedules: items.map((s) => scheduleSummaryView(s, this.deps.settings.baseUrl)), ...more };
  }

  /** GET /v1/schedules/{id}: one of the account's series with every period (404 for another account's). */
  async get(cred: Credential, scheduleId: string) {
    ensureScope(cred, "read_only");
    const r = await this.deps.clients.schedules.getSchedule({ scheduleId: scheduleIdOf(scheduleId), accountId: cred.accountId });
    return scheduleView(answered(r.schedule, "schedule"), this.deps.settings.baseUrl);
  }

  /** POST /v1/schedules/{id}/cancel: the seller's cancel; settled periods stay settled. */
  async cancel(cred: Credential, scheduleId: string, raw: unknown) {
    ensureScope(cred, "payments");
    const body = validateBody("ScheduleCancel", raw ?? {});
    const r = await this.deps.clients.schedules.cancelSchedule({
      accountId: cred.accountId,
      scheduleId: scheduleIdOf(scheduleId),
      actor: cred.actor,
      ...(body.reason !== undefined ? { reason: body.reason } : {}),
    });
    return sellerCancelView(r, this.deps.settings.baseUrl);
  }

  /** GET /schedule/{id}: the buyer's view, with how to cancel. */
  async buyerView(scheduleId: string) {
    const r = await this.deps.clients.schedules.getBuyerView({ scheduleId: scheduleIdOf(scheduleId) });
    return buyerScheduleView(r, this.deps.settings.baseUrl);
  }

  /** POST /schedule/{id}/cancel: the payer's cancel, one of three ways (ScheduleBuyerCancel). */
  async buyerCancel(scheduleId: string, raw: unknown) {
    const body = validateBody("ScheduleBuyerCancel", raw);
    const method =
      body.signature !== undefined
        ? { case: "signature" as const, value: body.signature }
        : body.authorizations !== undefined
          ? {
              case: "authorizations" as const,
              value: { items: body.authorizations.map((a) => ({ nonce: a.nonce, v: a.signature.v, r: a.signature.r, s: a.signature.s })) },
            }
          : body.payer !== undefined
            ? { case: "payer" as const, value: body.payer }
            : undefined;
    if (method === undefined) throw invalid([{ field: "signature", reason: "send exactly one of signature, authorizations or payer" }]);
    const r = await this.deps.clients.schedules.cancelByBuyer({ scheduleId: scheduleIdOf(scheduleId), method });
    return buyerCancelView(r, this.deps.settings.baseUrl);
  }
}

/** A schedule id from a path: anything else names no series (404). */
export function scheduleIdOf(id: string): string {
  if (!isId("schedule", id)) throw new ProblemError("not-found", "No such schedule.");
  return id;
}
