import { fromBinary } from "@bufbuild/protobuf";
import { idempotentConsumer, type Bus, type Subscription } from "@c402/bus";
import { paymentEventsV1, TOPICS } from "@c402/contracts";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Logger } from "@c402/logging";
import type { SeriesBook } from "../domain/series-book";
import type { SchedulesDb } from "../store/schedules-store";

export const SCHEDULES_PAYMENT_CONSUMER = "schedules.payment-settled";

/**
 * A series' payments: period 0's payment.settled (with `series`) starts the
 * series; period k's marks it settled (the scheduler may have done so from
 * payments' answer already: the period settles once either way). Payments of
 * other sales are acknowledged without touching the database.
 */
export function subscribeSeriesPayments(bus: Bus, book: SeriesBook, logger: Logger, onCommitted: () => void): Promise<Subscription> {
  const apply = idempotentConsumer(
    book.db,
    SCHEDULES_PAYMENT_CONSUMER,
    async (trx, envelope) => {
      const p = fromBinary(paymentEventsV1.PaymentSettledSchema, envelope.payload);
      const scheduleId = p.scheduleId as string;
      const period = p.schedulePeriod ?? 0;
      if (period === 0) {
        if (!p.series) return logger.warn({ scheduleId, paymentId: p.paymentId }, "period 0 of a series settled without its series: nothing to start");
        await book.start(trx as SchedulesDb, p);
        return;
      }
      const settled = await book.settle(trx as SchedulesDb, scheduleId, period, p.paymentId, p.settledAt ? timestampDate(p.settledAt) : undefined);
      if (!settled) logger.debug({ scheduleId, period }, "a series period's payment was already recorded (or its series is unknown)");
    },
    { ignore: (envelope) => fromBinary(paymentEventsV1.PaymentSettledSchema, envelope.payload).scheduleId === undefined },
  );
  return bus.subscribe({
    topic: TOPICS.paymentSettled,
    group: SCHEDULES_PAYMENT_CONSUMER,
    handler: async (message) => {
      await apply(message);
      onCommitted();
    },
  });
}
