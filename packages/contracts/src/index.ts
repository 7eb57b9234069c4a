// The one home of generated protobuf code. Regenerate with `pnpm proto:generate`.
export * as identityV1 from "./gen/identity/v1/identity_pb";
export * as catalogV1 from "./gen/catalog/v1/catalog_pb";
export * as catalogReportsV1 from "./gen/catalog/v1/reports_pb";
export * as paymentsV1 from "./gen/payments/v1/payments_pb";
export * as healthV1 from "./gen/health/v1/health_pb";
export * as webhooksV1 from "./gen/webhooks/v1/webhooks_pb";
export * as fulfillmentV1 from "./gen/fulfillment/v1/fulfillment_pb";
export * as eventsV1 from "./gen/events/v1/envelope_pb";
export * as paymentEventsV1 from "./gen/events/payments/v1/payment_settled_pb";
export * as accountEventsV1 from "./gen/events/account/v1/account_activity_pb";
export * as catalogEventsV1 from "./gen/events/catalog/v1/checkout_reported_pb";
export * from "./topics";
export * from "./enums";
export * from "./reports";
export * from "./origin-keys";
export * from "./content";
export * from "./x402-messages";
export * from "./webhook-events";
