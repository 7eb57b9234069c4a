import { randomUUID } from "node:crypto";
import { accountActivityRow } from "@c402/account-events";
import { enqueueOutboxRow } from "@c402/bus";
import type { eventsV1 } from "@c402/contracts";
import { newId } from "@c402/ids";
import { webhookDeliveries } from "@c402/metrics";
import type { Logger } from "@c402/logging";
import { OutboundRefused, type GuardedFetch } from "@c402/outbound-http";
import type { SecretSealer } from "@c402/sealed-secrets";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { deliveriesStore, type ClaimedDelivery } from "../store/deliveries-store";
import { endpointsStore } from "../store/endpoints-store";
import { webhooksStore, type AttemptOutcome, type WebhooksDb } from "../store/webhooks-store";
import { payloadOf, type WebhookEventSource } from "./event-catalogue";
import { nextAttemptAt, RETRY_WINDOW_MS, retryAfterMs } from "./retry-schedule";
import { signatureHeaders } from "./signatures";
import type { SigningKeys } from "./signing-keys";

export interface DispatcherDeps {
  db: WebhooksDb;
  sealer: SecretSealer;
  keys: SigningKeys;
  /** The guarded client, with redirects off (a 3xx is an answer, never followed) and the attempt timeout. */
  fetch: GuardedFetch;
  /** The public base URL (receipt_url). */
  baseUrl: string;
  /** How long one attempt may take; a lease lasts twice that plus a second. */
  timeoutMs: number;
  /** Attempts in flight at once, per process. */
  concurrency: number;
  logger: Logger;
  clock?: () => Date;
  random?: () => number;
  /** Called after a commit that wrote to the outbox (an endpoint disabled). */
  onOutbox?: () => void;
}

/** How often the table is looked at when nobody pokes (a retry falling due, a lease that ran out). */
export const SWEEP_INTERVAL_MS = 1_000;

/**
 * Turns bus events into deliveries and sends them. A delivery is a due task
 * in the table: the fan-out writes it in the transaction that records the
 * event, a sweeper leases it (SKIP LOCKED, so replicas share the work),
 * signs and sends one attempt, and records the attempt and what comes next
 * in one transaction. A process killed mid-send leaves a lease that runs out;
 * the delivery is then sent again with the same webhook-id (at least once).
 */
export class Dispatcher {
  private readonly clock: () => Date;
  private readonly random: () => number;
  private inFlight = new Set<Promise<void>>();
  private claiming = false;
  private again = false;
  /** The last sweep may have left due deliveries behind (it was full): a finished attempt looks again. */
  private backlog = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: DispatcherDeps) {
    this.clock = deps.clock ?? (() => new Date());
    this.random = deps.random ?? Math.random;
  }

  /** Records one bus event and its deliveries, once (fanOutEach of one). */
  fanOut(source: WebhookEventSource, envelope: eventsV1.EventEnvelope): Promise<number> {
    return this.fanOutEach([{ source, envelope }]);
  }

  /**
   * Records bus events and their deliveries, once each: a recorded event and
   * its deliveries are keyed by the event id, so a redelivered event adds
   * nothing. The events are looked at in one statement (most have no
   * receiver: then that statement is all they cost); each that has
   * receivers is then recorded with its deliveries in one more. Answers how
   * many deliveries it made.
   */
  async fanOutEach(events: { source: WebhookEventSource; envelope: eventsV1.EventEnvelope }[]): Promise<number> {
    if (events.length === 0) return 0;
    const now = this.clock();
    const incoming = events.map(({ source, envelope }) => ({
      source,
      envelope,
      event: source.event,
      row: {
        event_id: envelope.eventId,
        type: envelope.type,
        account_id: envelope.accountId,
        aggregate_id: envelope.aggregateId,
        test_mode: envelope.testMode,
        payload: envelope.payload,
        occurred_at: envelope.occurredAt ? timestampDate(envelope.occurredAt) : now,
      },
    }));
    const receivers = await webhooksStore.receiversOrRecordEach(this.deps.db, incoming);
    let made = 0;
    for (const [i, { source, envelope, event, row }] of incoming.entries()) {
      const endpoints = receivers[i] ?? [];
      if (endpoints.length === 0) continue;
      const payload = payloadOf(source, envelope, { baseUrl: this.deps.baseUrl });
      // The event and its deliveries in one statement (a receiver deleted meanwhile fails it on the foreign key: the bus retries).
      made += (
        await deliveriesStore.recordWithDeliveries(
          this.deps.db,
          row,
          endpoints.map((endpointId) => ({
            id: newId("webhookDelivery"),
            endpoint_id: endpointId,
            account_id: envelope.accountId,
            event_id: envelope.eventId,
            event,
            aggregate_id: envelope.aggregateId,
            test_mode: envelope.testMode,
            payload,
            next_attempt_at: now,
            give_up_at: new Date(now.getTime() + RETRY_WINDOW_MS),
            created_at: now,
          })),
        )
      ).length;
    }
    if (made > 0) this.poke();
    return made;
  }

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.poke(), SWEEP_INTERVAL_MS);
    this.poke();
  }

  /** Stops claiming and waits for the attempts under way (their leases are released by their records). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    while (this.claiming || this.inFlight.size > 0) await Promise.race([...this.inFlight, new Promise((r) => setTimeout(r, 20))]);
  }

  /** Looks for due deliveries now (after a fan-out, an attempt, a tick). */
  poke(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = true;
    void this.pump().then(
      () => {
        this.claiming = false;
        // A poke that came after the sweep's last look: look again now rather than at the next tick.
        if (this.again) this.poke();
      },
      (err: unknown) => {
        this.claiming = false; // the next tick tries again
        this.deps.logger.warn({ err }, "webhook sweep round failed");
      },
    );
  }

  /** One sweep: claims as many due deliveries as there is room for and starts them; test hooks await `drain`. */
  private async pump(): Promise<void> {
    do {
      this.again = false;
      const room = this.deps.concurrency - this.inFlight.size;
      if (room <= 0 || this.stopped) {
        this.backlog = room <= 0;
        return;
      }
      const claimed = await this.claim(room);
      this.backlog = claimed.length === room;
      for (const d of claimed) {
        const running: Promise<void> = this.attempt(d)
          .catch((err) => this.deps.logger.warn({ err, delivery: d.id }, "webhook attempt could not be recorded"))
          .finally(() => {
            this.inFlight.delete(running);
            if (this.backlog) this.poke();
          });
        this.inFlight.add(running);
      }
      if (claimed.length === room) this.again = true;
    } while (this.again && !this.stopped);
  }

  /** Runs sweeps until nothing is due now and nothing is in flight (tests with a virtual clock). */
  async drain(): Promise<void> {
    for (;;) {
      while (this.claiming || this.inFlight.size > 0) await Promise.race([...this.inFlight, new Promise((r) => setTimeout(r, 5))]);
      const claimed = await this.claim(this.deps.concurrency);
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((d) => this.attempt(d)));
    }
  }

  /** Leases up to `limit` due deliveries for one attempt each: long enough for the attempt and its record (twice the timeout, plus a second). */
  private claim(limit: number): Promise<ClaimedDelivery[]> {
    const now = this.clock();
    return deliveriesStore.claimDue(this.deps.db, { now, leaseUntil: new Date(now.getTime() + 2 * this.deps.timeoutMs + 1_000), token: randomUUID(), limit });
  }

  private async attempt(d: ClaimedDelivery): Promise<void> {
    const startedAt = this.clock();
    const headers = {
      "content-type": "application/json",
      "user-agent": "c402-webhooks/1",
      ...signatureHeaders({
        id: d.id,
        timestamp: Math.floor(startedAt.getTime() / 1000),
        body: d.payload,
        secret: this.deps.sealer.open(d.sealed_secret, d.endpoint_id),
        keys: await this.deps.keys.signing(),
      }),
    };
    const started = performance.now();
    let status: number | null = null;
    let error: string | null = null;
    let wait: number | undefined;
    try {
      const res = await this.deps.fetch(d.url, { method: "POST", headers, body: d.payload });
      status = res.status;
      if (status === 429 || status === 503) wait = retryAfterMs(res.headers.get("retry-after"), startedAt);
      await res.body?.cancel().catch(() => undefined);
    } catch (err) {
      error = err instanceof OutboundRefused ? err.message : "unreachable: request failed";
    }
    const latencyMs = Math.round(performance.now() - started);
    const now = this.clock();
    let outcome: AttemptOutcome;
    let next: Date | null = null;
    if (status !== null && status >= 200 && status < 300) outcome = "delivered";
    else if (status === 410) outcome = "disabled";
    else {
      if (status !== null) error = status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}`;
      next = nextAttemptAt({ attempt: d.attempts, now, giveUpAt: d.give_up_at, random: this.random(), ...(wait !== undefined ? { retryAfterMs: wait } : {}) });
      outcome = next ? "retry" : "failed";
    }
    if (outcome === "disabled") error = "HTTP 410: the receiver is gone; it is disabled until registered again";
    const attempt = { number: d.attempts, startedAt, statusCode: status, latencyMs, error, outcome, nextAttemptAt: next };
    webhookDeliveries.inc({ outcome });
    // One statement records it (a lease lost to another sweeper moves nothing: the rest is the holder's to record);
    // a 410 also disables the receiver, in the same transaction.
    if (outcome !== "disabled") {
      const moved = await deliveriesStore.recordAttempt(this.deps.db, d, attempt, now);
      // A retry got through: the receiver is back, so what else waits for it goes now rather than on its own schedule.
      if (moved && outcome === "delivered" && d.attempts > 1 && (await deliveriesStore.sendNowFor(this.deps.db, d.endpoint_id, now)) > 0) {
        this.backlog = true;
        this.poke();
      }
      return;
    }
    await this.deps.db.transaction().execute(async (trx) => {
      if (await deliveriesStore.recordAttempt(trx, d, attempt, now)) await this.disable(trx, d.endpoint_id, now);
    });
    this.deps.onOutbox?.();
  }

  /** 410 Gone: the receiver is disabled, what was due to it fails, and the seller sees it (account event). */
  private async disable(trx: WebhooksDb, endpointId: string, at: Date): Promise<void> {
    const changed = await endpointsStore.disable(trx, endpointId, "receiver answered 410 Gone", at);
    if (Number(changed.numUpdatedRows) === 0) return;
    await deliveriesStore.failPendingOf(trx, endpointId, "not sent: the receiver answered 410 Gone and was disabled");
    const row = await trx.selectFrom("endpoints").select(["account_id", "url"]).where("id", "=", endpointId).executeTakeFirstOrThrow();
    await enqueueOutboxRow(
      trx,
      accountActivityRow({
        accountId: row.account_id,
        action: "webhook.disabled",
        objectId: endpointId,
        detail: { url: row.url, reason: "410 Gone" },
        actor: "system",
        testMode: false,
        at,
      }),
    );
  }
}
