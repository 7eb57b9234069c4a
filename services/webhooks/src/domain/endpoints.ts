import { accountActivityRow, type AccountAction, type Actor } from "@c402/account-events";
import { enqueueOutboxRow } from "@c402/bus";
import { isWebhookEventName, WEBHOOK_EVENT_NAMES } from "@c402/contracts";
import { isId, newId } from "@c402/ids";
import { invalid, ProblemError, type FieldError } from "@c402/problems";
import { classifyHost } from "@c402/outbound-http";
import type { SecretSealer } from "@c402/sealed-secrets";
import { deliveriesStore } from "../store/deliveries-store";
import { endpointsStore, type EndpointView } from "../store/endpoints-store";
import type { DeliveryAttemptRow, DeliveryRow, DeliveryStatus, PageQuery, WebhooksDb } from "../store/webhooks-store";
import { newEndpointSecret } from "./signatures";

export const WEBHOOK_URL_MAX = 2048;
/** Receivers per account (a seller fans out further on their side). */
export const MAX_ENDPOINTS_PER_ACCOUNT = 16;

export interface EndpointChange {
  accountId: string;
  actor: Actor;
  testMode: boolean;
}

/** Says whether the outbound guard would refuse a URL before any socket (a literal private address, a blocked port…). */
export type UrlRefusal = (url: URL) => string | undefined;

const notFound = () => new ProblemError("not-found", "No webhook receiver with that id on this account.");

/**
 * Sellers' receivers. The secret is made here, answered once, and kept sealed
 * (the endpoint id is the associated data); deliveries open it at each
 * attempt, so a re-key takes effect from the next attempt. Every change
 * commits with its account event.
 */
export class Endpoints {
  constructor(
    private readonly deps: { db: WebhooksDb; sealer: SecretSealer; clock: () => Date; refusal: UrlRefusal; allowPlainHttp: boolean; onCommitted?: () => void },
  ) {}

  /**
   * Registers a receiver, or re-keys the one with the same url: a fresh secret, active again, its failure counter cleared.
   * An account's registrations take turns (a transaction lock on the account), so two at once of one new url make one
   * receiver and a re-key, and the count limit holds.
   */
  async register(req: EndpointChange & { url: string; events: readonly string[] }): Promise<{ endpoint: EndpointView; secret: string; rekeyed: boolean }> {
    const url = this.checkedUrl(req.url);
    const events = checkedEvents(req.events);
    const secret = newEndpointSecret();
    const at = this.deps.clock();
    const { id, rekeyed } = await this.deps.db.transaction().execute(async (trx) => {
      await endpointsStore.lockAccount(trx, req.accountId);
      const existing = await endpointsStore.findByUrl(trx, req.accountId, url);
      if (existing) {
        await endpointsStore.rekey(trx, existing.id, { sealed_secret: this.deps.sealer.seal(secret, existing.id), events, at });
        await this.record(trx, req, "webhook.rekeyed", existing.id, at, { url, events });
        return { id: existing.id, rekeyed: true };
      }
      if ((await endpointsStore.countForAccount(trx, req.accountId)) >= MAX_ENDPOINTS_PER_ACCOUNT) {
        throw new ProblemError("conflict", {
          message: `An account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook receivers.`,
          help: { retry_is_safe: false, fix: "DELETE /v1/webhooks/{id} one you no longer use" },
        });
      }
      const newIdValue = newId("webhook");
      await endpointsStore.insert(trx, {
        id: newIdValue,
        account_id: req.accountId,
        url,
        events,
        sealed_secret: this.deps.sealer.seal(secret, newIdValue),
        active: true,
        disabled_reason: null,
        disabled_at: null,
        last_success_at: null,
        last_failure_at: null,
        created_at: at,
        rekeyed_at: null,
      });
      await this.record(trx, req, "webhook.created", newIdValue, at, { url, events });
      return { id: newIdValue, rekeyed: false };
    });
    this.deps.onCommitted?.();
    return { endpoint: await this.shown(req.accountId, id), secret, rekeyed };
  }

  list(accountId: string, page: PageQuery): Promise<EndpointView[]> {
    return endpointsStore.list(this.deps.db, accountId, page);
  }

  /** Removes a receiver with its deliveries: nothing more is sent to it. */
  async delete(req: EndpointChange & { id: string }): Promise<{ endpoint: EndpointView; pendingRemoved: number }> {
    const endpoint = await this.shown(req.accountId, req.id);
    const at = this.deps.clock();
    const pendingRemoved = await this.deps.db.transaction().execute(async (trx) => {
      const pending = await deliveriesStore.countPendingOf(trx, req.id);
      await endpointsStore.delete(trx, req.id);
      await this.record(trx, req, "webhook.deleted", req.id, at, { url: endpoint.url, pending_removed: pending });
      return pending;
    });
    this.deps.onCommitted?.();
    return { endpoint: { ...endpoint, pending_deliveries: 0n }, pendingRemoved };
  }

  async deliveries(accountId: string, endpointId: string, page: PageQuery, status?: DeliveryStatus): Promise<DeliveryRow[]> {
    await this.shown(accountId, endpointId);
    return deliveriesStore.list(this.deps.db, endpointId, page, status);
  }

  async delivery(accountId: string, endpointId: string, deliveryId: string): Promise<{ delivery: DeliveryRow; attempts: DeliveryAttemptRow[] }> {
    await this.shown(accountId, endpointId);
    const delivery = isId("webhookDelivery", deliveryId) ? await deliveriesStore.find(this.deps.db, endpointId, deliveryId) : undefined;
    if (!delivery) throw new ProblemError("not-found", "No delivery with that id to this receiver.");
    return { delivery, attempts: await deliveriesStore.attemptsOf(this.deps.db, deliveryId) };
  }

  private async shown(accountId: string, id: string): Promise<EndpointView> {
    const row = isId("webhook", id) ? await endpointsStore.find(this.deps.db, accountId, id) : undefined;
    if (!row) throw notFound();
    return row;
  }

  /**
   * A receiver's URL: absolute https (plain http only to a loopback receiver,
   * where those are allowed: a developer's machine), no credentials or fragment, and not an
   * address the outbound guard refuses. Where a name points is judged again at
   * every attempt, since DNS can change.
   */
  private checkedUrl(raw: string): string {
    const field = "url";
    const refuse = (reason: string): never => {
      throw invalid([{ field, reason }]);
    };
    if (raw.length > WEBHOOK_URL_MAX) refuse(`must be at most ${WEBHOOK_URL_MAX} characters`);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return refuse("must be an absolute https URL");
    }
    const plainHttpAllowed = url.protocol === "http:" && this.deps.allowPlainHttp && classifyHost(url.hostname) === "loopback";
    if (url.protocol !== "https:" && !plainHttpAllowed) refuse("must be an absolute https URL");
    if (url.username || url.password) refuse("must not carry credentials (verify deliveries by their signatures)");
    if (url.hash) refuse("must not have a fragment");
    const refusal = this.deps.refusal(url);
    if (refusal) refuse(refusal);
    return url.href;
  }

  private async record(trx: WebhooksDb, change: EndpointChange, action: AccountAction, objectId: string, at: Date, detail: Record<string, unknown>) {
    await enqueueOutboxRow(
      trx,
      accountActivityRow({ accountId: change.accountId, action, objectId, detail, actor: change.actor, testMode: change.testMode, at }),
    );
  }
}

function checkedEvents(events: readonly string[]): string[] {
  const errors: FieldError[] = [];
  events.forEach((name, i) => {
    if (!isWebhookEventName(name)) errors.push({ field: `events[${i}]`, reason: `must be one of ${WEBHOOK_EVENT_NAMES.join(", ")}` });
  });
  if (events.length === 0) errors.push({ field: "events", reason: "must name at least one event (or be null for checkout.paid)" });
  if (errors.length) throw invalid(errors);
  return [...new Set(events)];
}
