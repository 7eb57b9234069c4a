/**
 * Bus topics are part of the contract: one topic per event type, keyed by the
 * aggregate id so that one aggregate's events stay in order.
 */
export const TOPICS = {
  paymentSettled: "events.payments.v1.payment-settled",
  /** Every service's account events (keyed by the id of what changed), recorded by identity. */
  accountActivity: "events.account.v1.account-activity",
  /** A report filed on a checkout (catalog; keyed by the checkout id). */
  checkoutReported: "events.catalog.v1.checkout-reported",
  /**
   * Read counts of limited passes identity held before content-grants owned
   * them (identity's migration 0014; keyed by the batch's first pass id).
   */
  passUsesMoved: "events.content_grants.v1.pass-uses-moved",
  /**
   * Every escrow event (escrow.held, escrow.on_hold, escrow.escalated,
   * escrow.released, escrow.refunded) on one topic keyed by the payment id,
   * so one escrow's events stay in order; the envelope's type names each.
   */
  escrowEvents: "events.escrow.v1.escrow-events",
  /**
   * Every schedule event (schedule.started, .charged, .charge_failed, .lapsed,
   * .cancelled, .completed) on one topic keyed by the schedule id, so one
   * series' events stay in order; the envelope's type names each.
   */
  scheduleEvents: "events.schedules.v1.schedule-events",
} as const;

export const EVENT_TYPES = {
  paymentSettled: "payment.settled",
  accountActivity: "account.activity",
  checkoutReported: "checkout.reported",
  passUsesMoved: "pass_uses.moved",
  escrowHeld: "escrow.held",
  escrowOnHold: "escrow.on_hold",
  escrowEscalated: "escrow.escalated",
  escrowReleased: "escrow.released",
  escrowRefunded: "escrow.refunded",
  scheduleStarted: "schedule.started",
  scheduleCharged: "schedule.charged",
  scheduleChargeFailed: "schedule.charge_failed",
  scheduleLapsed: "schedule.lapsed",
  scheduleCancelled: "schedule.cancelled",
  scheduleCompleted: "schedule.completed",
} as const;
