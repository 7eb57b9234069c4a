import { fromBinary, type Message } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import {
  catalogEventsV1,
  escrowEventsV1,
  escrowStatusUrl,
  EVENT_TYPES,
  paymentEventsV1,
  receiptUrl,
  scheduleEventsV1,
  TOPICS,
  type eventsV1,
  type WebhookEventName,
} from "@c402/contracts";

/**
 * Which bus events become which webhook events, and the payload each one
 * carries. Adding a webhook event is one entry here:
 * the topic it comes from, its name, and its `data`; the consumer, fan-out,
 * signing and retries are the same for every event.
 */
export interface WebhookEventSource {
  topic: string;
  /** The envelope `type` on that topic. */
  busType: string;
  event: WebhookEventName;
  /** The payload's `data` for one bus event. */
  data(envelope: eventsV1.EventEnvelope, ctx: { baseUrl: string }): Record<string, unknown>;
}

const iso = (t: Timestamp | undefined): string | null => (t ? timestampDate(t).toISOString() : null);

/** An atomic amount as a JSON integer (USDC amounts stay far below 2^53; a larger one is a bug, not a payload). */
function integer(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`amount ${value} exceeds a JSON-safe integer`);
  return Number(value);
}

function partiesOf(json: string | undefined): unknown {
  if (json === undefined) return null;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return null;
  }
}

/** The escrow as an escrow.* event leaves it (every escrow event's `data` starts with it). */
function escrowData(e: escrowEventsV1.EscrowSnapshot | undefined, txHash: string, baseUrl: string): Record<string, unknown> {
  if (!e) throw new TypeError("an escrow event without its escrow");
  return {
    payment_id: e.paymentId,
    checkout_id: e.checkoutId,
    state: e.state,
    network: e.network,
    payer: e.payer,
    total: integer(e.total),
    preset: e.preset,
    settle_window: e.settleSeconds,
    hold_window: e.holdSeconds,
    backstop_window: e.backstopSeconds,
    arbiter: e.arbiter,
    deposited_at: iso(e.depositedAt),
    deadline: iso(e.deadline),
    tx_hash: txHash,
    status_url: escrowStatusUrl(baseUrl, e.checkoutId, e.paymentId),
    handoff_id: e.handoffId ?? null,
    test_mode: e.testMode,
  };
}

/** An escrow event's message: the escrow as it leaves it, and the transaction that moved it. */
type EscrowEventMessage = Message & { escrow?: escrowEventsV1.EscrowSnapshot; txHash: string };

/** The source of one escrow event: all five come on one topic, told apart by the envelope's type; `more` adds its own fields. */
function escrowSource<M extends EscrowEventMessage>(
  busType: string,
  event: WebhookEventName,
  schema: GenMessage<M>,
  more: (e: M, baseUrl: string) => Record<string, unknown> = () => ({}),
): WebhookEventSource {
  return {
    topic: TOPICS.escrowEvents,
    busType,
    event,
    data(envelope, { baseUrl }) {
      const e = fromBinary(schema, envelope.payload);
      return { ...escrowData(e.escrow, e.txHash, baseUrl), ...more(e, baseUrl) };
    },
  };
}

const ESCROW_SOURCES: readonly WebhookEventSource[] = [
  escrowSource(EVENT_TYPES.escrowHeld, "escrow.held", escrowEventsV1.EscrowHeldSchema),
  escrowSource(EVENT_TYPES.escrowOnHold, "escrow.on_hold", escrowEventsV1.EscrowOnHoldSchema),
  escrowSource(EVENT_TYPES.escrowEscalated, "escrow.escalated", escrowEventsV1.EscrowEscalatedSchema, ({ arbiterReadiness: r }) => ({
    arbiter_readiness: r
      ? { arbiter: r.arbiter, family: r.family, gas_balance: r.gasBalance ?? null, rulings_affordable: r.rulingsAffordable ?? null, note: r.note }
      : null,
  })),
  escrowSource(EVENT_TYPES.escrowReleased, "escrow.released", escrowEventsV1.EscrowReleasedSchema, (e, baseUrl) => ({
    by: e.by,
    receipt_url: e.escrow ? receiptUrl(baseUrl, e.escrow.paymentId) : null,
  })),
  escrowSource(EVENT_TYPES.escrowRefunded, "escrow.refunded", escrowEventsV1.EscrowRefundedSchema, (e) => ({ by: e.by })),
];

/** The series as a schedule.* event leaves it (every schedule event's `data.schedule`). */
function scheduleData(s: scheduleEventsV1.ScheduleSnapshot | undefined): Record<string, unknown> {
  if (!s) throw new TypeError("a schedule event without its series");
  return {
    id: s.id,
    url: s.url,
    status: s.status,
    periods: s.periods,
    periods_settled: s.periodsSettled,
    paid_through: iso(s.paidThrough),
    next_charge_at: iso(s.nextChargeAt),
    checkout_id: s.checkoutId,
    payer: s.payer,
    network: s.network,
    interval_days: s.intervalDays,
  };
}

/** A schedule event's message: the series as it leaves it. */
type ScheduleEventMessage = Message & { schedule?: scheduleEventsV1.ScheduleSnapshot };

/** The source of one schedule event: all six come on one topic, told apart by the envelope's type; `more` adds its own fields. */
function scheduleSource<M extends ScheduleEventMessage>(
  busType: string,
  event: WebhookEventName,
  schema: GenMessage<M>,
  more: (e: M, baseUrl: string) => Record<string, unknown> = () => ({}),
): WebhookEventSource {
  return {
    topic: TOPICS.scheduleEvents,
    busType,
    event,
    data(envelope, { baseUrl }) {
      const e = fromBinary(schema, envelope.payload);
      return { schedule: scheduleData(e.schedule), ...more(e, baseUrl), test_mode: envelope.testMode };
    },
  };
}

const SCHEDULE_SOURCES: readonly WebhookEventSource[] = [
  scheduleSource(EVENT_TYPES.scheduleStarted, "schedule.started", scheduleEventsV1.ScheduleStartedSchema, (e, baseUrl) => ({
    period: 0,
    payment_id: e.paymentId,
    receipt_url: receiptUrl(baseUrl, e.paymentId),
  })),
  scheduleSource(EVENT_TYPES.scheduleCharged, "schedule.charged", scheduleEventsV1.ScheduleChargedSchema, (e, baseUrl) => ({
    period: e.period,
    payment_id: e.paymentId,
    receipt_url: receiptUrl(baseUrl, e.paymentId),
  })),
  scheduleSource(EVENT_TYPES.scheduleChargeFailed, "schedule.charge_failed", scheduleEventsV1.ScheduleChargeFailedSchema, (e) => ({
    period: e.period,
    reason: e.reason,
    retry_at: iso(e.retryAt),
    window_closes_at: iso(e.windowClosesAt),
  })),
  scheduleSource(EVENT_TYPES.scheduleLapsed, "schedule.lapsed", scheduleEventsV1.ScheduleLapsedSchema, (e) => ({ period: e.period, reason: e.reason })),
  scheduleSource(EVENT_TYPES.scheduleCancelled, "schedule.cancelled", scheduleEventsV1.ScheduleCancelledSchema, (e) => ({
    by: e.by,
    reason: e.reason ?? null,
    onchain: e.onchain,
  })),
  scheduleSource(EVENT_TYPES.scheduleCompleted, "schedule.completed", scheduleEventsV1.ScheduleCompletedSchema),
];

export const EVENT_SOURCES: readonly WebhookEventSource[] = [
  {
    topic: TOPICS.paymentSettled,
    busType: EVENT_TYPES.paymentSettled,
    event: "checkout.paid",
    data(envelope, { baseUrl }) {
      const p = fromBinary(paymentEventsV1.PaymentSettledSchema, envelope.payload);
      return {
        checkout_id: p.checkoutId,
        title: p.title,
        payment_id: p.paymentId,
        network: p.network,
        asset: p.asset,
        amount_usd: p.amountUsd,
        provider_amount: integer(p.providerAmount),
        platform_amount: p.platformAmount === undefined ? null : integer(p.platformAmount),
        fee_amount: integer(p.feeAmount),
        total: integer(p.total),
        platform_fee_to: p.platformFeeTo ?? null,
        payer: p.payer,
        pay_to: p.payTo,
        tx_hash: p.txHash,
        receipt_url: receiptUrl(baseUrl, p.paymentId),
        sold_by: p.soldBy ?? null,
        parties: partiesOf(p.partiesJson),
        handoff_id: p.handoffId ?? null,
        test_mode: p.testMode,
        settled_at: iso(p.settledAt),
      };
    },
  },
  {
    topic: TOPICS.checkoutReported,
    busType: EVENT_TYPES.checkoutReported,
    event: "checkout.reported",
    data(envelope) {
      const r = fromBinary(catalogEventsV1.CheckoutReportedSchema, envelope.payload);
      return {
        report_id: r.reportId,
        checkout_id: r.checkoutId,
        category: r.category,
        kind: r.kind,
        receipt_id: r.receiptId ?? null,
        test_mode: envelope.testMode,
        created_at: iso(r.createdAt),
      };
    },
  },
  ...ESCROW_SOURCES,
  ...SCHEDULE_SOURCES,
];

/** The source of a bus event, if it becomes a webhook event. */
export function sourceOf(topic: string, busType: string): WebhookEventSource | undefined {
  return EVENT_SOURCES.find((s) => s.topic === topic && s.busType === busType);
}

/** The exact body every attempt of a delivery sends. */
export function payloadOf(source: WebhookEventSource, envelope: eventsV1.EventEnvelope, ctx: { baseUrl: string }): string {
  return JSON.stringify({
    id: envelope.eventId,
    event: source.event,
    created_at: iso(envelope.occurredAt) ?? new Date().toISOString(),
    data: source.data(envelope, ctx),
  });
}
