/**
 * The webhook events of the spec ("Events"), the names a receiver subscribes
 * to. A name is accepted at registration before its feature fires it (escrow,
 * schedules): the receiver then gets it from the day the feature lands.
 * `WEBHOOK_EVENTS_FIRED` says which ones fire today (the webhooks service's
 * event catalogue is checked against it).
 */
export const WEBHOOK_EVENT_NAMES = [
  "checkout.paid",
  "checkout.reported",
  "escrow.held",
  "escrow.on_hold",
  "escrow.escalated",
  "escrow.released",
  "escrow.refunded",
  "schedule.started",
  "schedule.charged",
  "schedule.charge_failed",
  "schedule.lapsed",
  "schedule.cancelled",
  "schedule.completed",
] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENT_NAMES)[number];

export const WEBHOOK_EVENTS_FIRED = [
  "checkout.paid",
  "checkout.reported",
  "escrow.held",
  "escrow.on_hold",
  "escrow.escalated",
  "escrow.released",
  "escrow.refunded",
  "schedule.started",
  "schedule.charged",
  "schedule.charge_failed",
  "schedule.lapsed",
  "schedule.cancelled",
  "schedule.completed",
] as const satisfies readonly WebhookEventName[];

/** What a registration without `events` subscribes to. */
export const DEFAULT_WEBHOOK_EVENTS: readonly WebhookEventName[] = ["checkout.paid"];

export function isWebhookEventName(name: string): name is WebhookEventName {
  return (WEBHOOK_EVENT_NAMES as readonly string[]).includes(name);
}

/** A receipt's public URL: the payload's `receipt_url`, the seller API's and the webhooks' alike. */
export const receiptUrl = (baseUrl: string, paymentId: string): string => `${baseUrl}/r/${paymentId}`;

/** Where an escrow is followed (GET /e/{id}/status): the escrow webhooks' `status_url`, the escrow API's alike. */
export const escrowStatusUrl = (baseUrl: string, checkoutId: string, paymentId: string): string =>
  `${baseUrl}/e/${checkoutId}/status?payment_id=${encodeURIComponent(paymentId)}`;
