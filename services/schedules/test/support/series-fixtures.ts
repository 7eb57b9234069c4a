import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { outboxRow } from "@c402/bus";
import { EVENT_TYPES, paymentEventsV1, TOPICS } from "@c402/contracts";
import { newId } from "@c402/ids";
import { keccak256, toHex } from "viem";

export interface SeriesTerms {
  scheduleId?: string;
  accountId?: string;
  checkoutId?: string;
  payer?: string;
  testMode?: boolean;
  periods?: number;
  intervalDays?: number;
  /** The anchor T (period k's window opens at T + k·I). */
  anchor: Date;
  /** The length of one day: 86,400 s live, the compressed day of a test-mode series. */
  daySeconds?: number;
}

export const heldNonce = (scheduleId: string, period: number) => keccak256(toHex(`${scheduleId}/${period}`));

/** A series as its period 0's payment.settled carries it (payments writes it; ADR 20). */
export function seriesStartedEvent(t: SeriesTerms) {
  const scheduleId = t.scheduleId ?? newId("schedule");
  const periods = t.periods ?? 3;
  const intervalMs = (t.intervalDays ?? 1) * (t.daySeconds ?? 60) * 1_000;
  const at = (k: number) => timestampFromDate(new Date(t.anchor.getTime() + k * intervalMs));
  const testMode = t.testMode ?? true;
  const payment = create(paymentEventsV1.PaymentSettledSchema, {
    paymentId: newId("payment"),
    checkoutId: t.checkoutId ?? newId("checkout"),
    title: "Monthly report",
    network: testMode ? "eip155:84532" : "eip155:84532",
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    amountUsd: "1.00",
    providerAmount: 1_000_000n,
    feeAmount: 20_000n,
    total: 1_020_000n,
    payer: t.payer ?? "0x000000000000000000000000000000000000bEEF",
    payTo: "0x000000000000000000000000000000000000dEaD",
    txHash: `0x${"11".repeat(32)}`,
    subject: "subject",
    testMode,
    settledAt: timestampFromDate(t.anchor),
    scheduleId,
    schedulePeriod: 0,
    series: {
      accountId: t.accountId ?? newId("account"),
      intervalDays: t.intervalDays ?? 1,
      periods,
      held: Array.from({ length: periods - 1 }, (_, i) => ({
        period: i + 1,
        nonce: heldNonce(scheduleId, i + 1),
        validAfter: at(i + 1),
        validBefore: at(i + 2),
      })),
    },
  });
  return { scheduleId, payment };
}

/** A later period's payment.settled (payments fires it when the period settles). */
export function periodSettledEvent(start: paymentEventsV1.PaymentSettled, period: number, paymentId = newId("payment")) {
  return create(paymentEventsV1.PaymentSettledSchema, { ...start, paymentId, schedulePeriod: period, series: undefined });
}

/** The payment.settled envelope as payments' outbox writes it. */
export function paymentSettledMessage(p: paymentEventsV1.PaymentSettled) {
  const row = outboxRow({
    topic: TOPICS.paymentSettled,
    type: EVENT_TYPES.paymentSettled,
    accountId: p.series?.accountId ?? "acct",
    testMode: p.testMode,
    aggregateId: p.paymentId,
    payload: toBinary(paymentEventsV1.PaymentSettledSchema, p),
  });
  return { key: p.paymentId, value: new Uint8Array(row.payload) };
}
