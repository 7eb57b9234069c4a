import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogEventsV1, escrowEventsV1, EVENT_TYPES, eventsV1, paymentEventsV1, scheduleEventsV1 } from "@c402/contracts";
import { newId } from "@c402/ids";
import { createCapturingLogger } from "@c402/logging";
import { createGuardedFetch } from "@c402/outbound-http";
import { generateKeyringText, parseKeyring, SecretSealer } from "@c402/sealed-secrets";
import { Dispatcher } from "../src/domain/dispatcher";
import { Endpoints } from "../src/domain/endpoints";
import { SigningKeys } from "../src/domain/signing-keys";
import type { WebhooksDb } from "../src/store/webhooks-store";

export const BASE_URL = "https://checkout.test";

/** A payment.settled envelope as payments writes it (every field of the checkout.paid payload set). */
export function paymentSettledEnvelope(accountId: string, over: { testMode?: boolean; paymentId?: string; eventId?: string; at?: Date } = {}) {
  const paymentId = over.paymentId ?? newId("payment");
  const testMode = over.testMode ?? false;
  const at = over.at ?? new Date();
  const payload = create(paymentEventsV1.PaymentSettledSchema, {
    paymentId,
    checkoutId: "chk_AAAAAAAAAAAAAAAAAAAAAAAA",
    title: "Weather in Paris",
    network: "eip155:84532",
    asset: "USDC",
    amountUsd: "1.00",
    providerAmount: 1_000_000n,
    platformAmount: 50_000n,
    feeAmount: 15_000n,
    total: 1_015_000n,
    payer: "0x1111111111111111111111111111111111111111",
    payTo: "0x2222222222222222222222222222222222222222",
    platformFeeTo: "0x3333333333333333333333333333333333333333",
    txHash: "0xabc",
    subject: "sub_x",
    handoffId: "handoff_nonce_0123456789",
    testMode,
    settledAt: timestampFromDate(at),
    soldBy: "ada",
    partiesJson: JSON.stringify({ buyer: { name: "Bob", ref: "b-1" } }),
  });
  return create(eventsV1.EventEnvelopeSchema, {
    eventId: over.eventId ?? newId("event"),
    type: EVENT_TYPES.paymentSettled,
    occurredAt: timestampFromDate(at),
    accountId,
    testMode,
    aggregateId: paymentId,
    payload: toBinary(paymentEventsV1.PaymentSettledSchema, payload),
  });
}

export function checkoutReportedEnvelope(accountId: string) {
  const payload = create(catalogEventsV1.CheckoutReportedSchema, {
    reportId: "rpt_AAAAAAAAAAAAAAAAAAAAAAAA",
    checkoutId: "chk_AAAAAAAAAAAAAAAAAAAAAAAA",
    category: "not_delivered",
    kind: "anonymous",
    createdAt: timestampFromDate(new Date()),
  });
  return create(eventsV1.EventEnvelopeSchema, {
    eventId: newId("event"),
    type: EVENT_TYPES.checkoutReported,
    occurredAt: timestampFromDate(new Date()),
    accountId,
    testMode: false,
    aggregateId: payload.checkoutId,
    payload: toBinary(catalogEventsV1.CheckoutReportedSchema, payload),
  });
}

/** An escrow.* envelope as the escrow service writes it: held, escalated (with the arbiter's readiness) or released. */
export function escrowEnvelope(accountId: string, type: "held" | "escalated" | "released", over: { paymentId?: string; testMode?: boolean } = {}) {
  const paymentId = over.paymentId ?? newId("payment");
  const testMode = over.testMode ?? false;
  const at = new Date();
  const escrow = create(escrowEventsV1.EscrowSnapshotSchema, {
    paymentId,
    checkoutId: "esc_AAAAAAAAAAAAAAAAAAAAAAAA",
    accountId,
    state: type,
    network: "eip155:84532",
    handoffId: "handoff_nonce_0123456789",
    preset: "standard",
    settleSeconds: 259_200,
    holdSeconds: 604_800,
    backstopSeconds: 2_592_000,
    arbiter: "0x4444444444444444444444444444444444444444",
    payer: "0x1111111111111111111111111111111111111111",
    total: 1_030_000n,
    depositedAt: timestampFromDate(at),
    ...(type === "released" ? {} : { deadline: timestampFromDate(new Date(at.getTime() + 259_200_000)) }),
    testMode,
  });
  const txHash = `0x${"ab".repeat(32)}`;
  const [busType, payload] =
    type === "held"
      ? [EVENT_TYPES.escrowHeld, toBinary(escrowEventsV1.EscrowHeldSchema, create(escrowEventsV1.EscrowHeldSchema, { escrow, txHash }))]
      : type === "escalated"
        ? [
            EVENT_TYPES.escrowEscalated,
            toBinary(
              escrowEventsV1.EscrowEscalatedSchema,
              create(escrowEventsV1.EscrowEscalatedSchema, {
                escrow,
                txHash,
                arbiterReadiness: { arbiter: escrow.arbiter, family: "evm", gasBalance: "1000000000000000", rulingsAffordable: 5, note: "ready" },
              }),
            ),
          ]
        : [
            EVENT_TYPES.escrowReleased,
            toBinary(escrowEventsV1.EscrowReleasedSchema, create(escrowEventsV1.EscrowReleasedSchema, { escrow, txHash, by: "ruling" })),
          ];
  return create(eventsV1.EventEnvelopeSchema, {
    eventId: newId("event"),
    type: busType,
    occurredAt: timestampFromDate(at),
    accountId,
    testMode,
    aggregateId: paymentId,
    payload,
  });
}

/** The webhooks domain on one database, with a virtual clock the test moves (real time while it is unset). */
export function webhookRig(db: WebhooksDb, opts: { timeoutMs?: number; random?: () => number; concurrency?: number; keyringText?: string } = {}) {
  const clock = { at: undefined as Date | undefined };
  const now = () => clock.at ?? new Date();
  const sealer = new SecretSealer(parseKeyring(opts.keyringText ?? generateKeyringText("w1")));
  const timeoutMs = opts.timeoutMs ?? 1_000;
  const fetch = createGuardedFetch({ allowLoopback: true, resolve: async () => [], maxRedirects: 0, timeoutMs });
  const keys = new SigningKeys({ db, sealer, clock: now, rotateAfterMs: 90 * 86_400_000 });
  const endpoints = new Endpoints({ db, sealer, clock: now, refusal: (url) => fetch.refusalOf(url)?.message, allowPlainHttp: true });
  const { logger, lines } = createCapturingLogger({ service: "webhooks", level: "warn" });
  const dispatcher = new Dispatcher({
    db,
    sealer,
    keys,
    fetch,
    baseUrl: BASE_URL,
    timeoutMs,
    concurrency: opts.concurrency ?? 16,
    logger,
    clock: now,
    ...(opts.random ? { random: opts.random } : {}),
  });
  return { clock, now, sealer, fetch, keys, endpoints, dispatcher, logLines: lines };
}

export const SELLER = { actor: "key:sk_test_abc" as const, testMode: false };

/** A schedule.* envelope as the schedules service writes it: started, charge_failed or cancelled. */
export function scheduleEnvelope(accountId: string, type: "started" | "charge_failed" | "cancelled", over: { scheduleId?: string; testMode?: boolean } = {}) {
  const scheduleId = over.scheduleId ?? newId("schedule");
  const testMode = over.testMode ?? true;
  const at = new Date("2030-01-01T00:00:00Z");
  const schedule = create(scheduleEventsV1.ScheduleSnapshotSchema, {
    id: scheduleId,
    url: `https://checkout.test/schedule/${scheduleId}`,
    status: type === "cancelled" ? "cancelled" : "active",
    periods: 3,
    periodsSettled: 1,
    paidThrough: timestampFromDate(new Date(at.getTime() + 86_400_000)),
    accountId,
    checkoutId: "chk_AAAAAAAAAAAAAAAAAAAAAAAA",
    payer: "0x1111111111111111111111111111111111111111",
    network: "eip155:84532",
    testMode,
    intervalDays: 1,
  });
  const V = scheduleEventsV1;
  const [busType, payload] =
    type === "started"
      ? [
          EVENT_TYPES.scheduleStarted,
          toBinary(V.ScheduleStartedSchema, create(V.ScheduleStartedSchema, { schedule, paymentId: "pay_AAAAAAAAAAAAAAAAAAAAAAAA" })),
        ]
      : type === "charge_failed"
        ? [
            EVENT_TYPES.scheduleChargeFailed,
            toBinary(
              V.ScheduleChargeFailedSchema,
              create(V.ScheduleChargeFailedSchema, {
                schedule,
                period: 1,
                reason: "insufficient_funds",
                retryAt: timestampFromDate(new Date(at.getTime() + 86_430_000)),
                windowClosesAt: timestampFromDate(new Date(at.getTime() + 172_800_000)),
              }),
            ),
          ]
        : [EVENT_TYPES.scheduleCancelled, toBinary(V.ScheduleCancelledSchema, create(V.ScheduleCancelledSchema, { schedule, by: "buyer", onchain: false }))];
  return create(eventsV1.EventEnvelopeSchema, {
    eventId: newId("event"),
    type: busType,
    occurredAt: timestampFromDate(at),
    accountId,
    testMode,
    aggregateId: scheduleId,
    payload,
  });
}
