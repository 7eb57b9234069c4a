/**
 * Bus topics are part of the contract: one topic per event type, keyed by the
 * aggregate id so that one aggregate's events stay in order.
 */
export const TOPICS = {
  paymentSettled: "events.payments.v1.payment-settled",
} as const;

export const EVENT_TYPES = {
  paymentSettled: "payment.settled",
} as const;
