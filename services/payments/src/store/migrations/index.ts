import type { MigrationSet } from "@c402/db";
import { paymentsInitial } from "./0001_payments";
import { paymentsOutbox } from "./0002_outbox";
import { liveSettlement } from "./0003_live_settlement";
import { handoffLookup } from "./0004_handoff";
import { paymentParties } from "./0005_parties";
import { paymentPartiesAsSent } from "./0007_parties_as_sent";
import { paymentPlatformCut } from "./0006_platform_cut";
import { paidOnDelivery } from "./0008_paid_on_delivery";
import { webhookFulfilment } from "./0009_webhook_fulfilment";
import { receiptsLedger } from "./0010_ledger";
import { senderNonces } from "./0011_sender_nonces";
import { paymentAnswerBy } from "./0012_answer_by";
import { paymentsProcessedEvents } from "./0013_processed_events";
import { paymentSeries } from "./0014_series";

/** The payments schema, in order. Kysely keys applied migrations by these names: never rename one. */
export const paymentsMigrations: MigrationSet = {
  "0001_payments": paymentsInitial,
  "0002_outbox": paymentsOutbox,
  "0003_live_settlement": liveSettlement,
  "0004_handoff": handoffLookup,
  "0005_parties": paymentParties,
  "0006_platform_cut": paymentPlatformCut,
  "0007_parties_as_sent": paymentPartiesAsSent,
  "0008_paid_on_delivery": paidOnDelivery,
  "0009_webhook_fulfilment": webhookFulfilment,
  "0010_ledger": receiptsLedger,
  "0011_sender_nonces": senderNonces,
  "0012_answer_by": paymentAnswerBy,
  "0013_processed_events": paymentsProcessedEvents,
  "0014_series": paymentSeries,
};
