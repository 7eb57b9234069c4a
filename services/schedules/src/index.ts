import type { Subscription } from "@c402/bus";
import { healthV1, schedulesV1, TOPICS } from "@c402/contracts";
import { migrate } from "@c402/db";
import { serviceOutboxRelay, standardHealth, startPeriodic, type PeriodicTask, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import type { SchedulesSettings } from "./config";
import { ChargeScheduler, type PaymentsForSchedules } from "./domain/charge-scheduler";
import { SeriesBook } from "./domain/series-book";
import { seriesStartFrom } from "./domain/series-start";
import { subscribeSeriesPayments } from "./events/payment-settled-consumer";
import { schedulesRpc } from "./rpc/schedules-rpc";
import type { SchedulesDb } from "./store/schedules-store";
import { schedulesInitial } from "./store/migrations/0001_schedules";
import { schedulesProcessedEvents } from "./store/migrations/0002_processed_events";
import { schedulesOutbox } from "./store/migrations/0003_outbox";

export { SCHEDULES_SCHEMA } from "./store/schedules-store";
export { schedulesConfigSpec, schedulesSettingsSpec, schedulesSettingsOf, type SchedulesSettings } from "./config";
export { jsonRpcChainClock, type ChainClock } from "./chain/chain-clock";
export { ChargeScheduler, type PaymentsForSchedules } from "./domain/charge-scheduler";
export { SeriesBook } from "./domain/series-book";
export { cancelMessage } from "./domain/cancel-message";
export * from "./domain/statuses";
export * from "./domain/retry-backoff";
export const schedulesMigrations = {
  "0001_schedules": schedulesInitial,
  "0002_processed_events": schedulesProcessedEvents,
  "0003_outbox": schedulesOutbox,
};

/** What a test may change of the service's clock and background work. */
export interface SchedulesTuning {
  /** The wall clock (record times; a test-mode series' clock). */
  wallClock?: () => Date;
  /** false: no scheduler rounds (a test drives ChargeScheduler itself). */
  scheduler?: boolean;
}

/**
 * Schedules (ADR 20): recurring series. A series starts from its period 0's
 * payment.settled, its held periods are charged on their dates through
 * payments (ChargeHeldPeriod) by a scheduler on every replica, and buyers and
 * sellers cancel it; every change is a schedule.* event, through the outbox.
 */
export async function createSchedulesService(
  deps: ServiceDeps,
  payments: PaymentsForSchedules,
  settings: SchedulesSettings,
  tuning: SchedulesTuning = {},
): Promise<ServiceModule> {
  await migrate(deps.database, schedulesMigrations);
  const db = deps.database.db as SchedulesDb;
  const relay = serviceOutboxRelay(deps, "schedules");
  const book = new SeriesBook(db, {
    baseUrl: settings.baseUrl,
    retry: settings.retry,
    ...(tuning.wallClock ? { wallClock: tuning.wallClock } : {}),
    onOutbox: () => relay.poke(),
    startOf: seriesStartFrom(payments),
  });
  const scheduler = new ChargeScheduler(book, payments, {
    leaseMs: settings.chargeLeaseMs,
    logger: deps.logger,
    ...(settings.chain ? { chain: settings.chain } : {}),
  });
  let subscription: Subscription | undefined;
  let rounds: PeriodicTask | undefined;
  return {
    name: "schedules",
    register(server) {
      server.add(schedulesV1.SchedulesService, schedulesRpc(book, payments));
      server.add(healthV1.HealthService, standardHealth(deps, "schedules"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.paymentSettled, TOPICS.scheduleEvents]);
      relay.start();
      subscription = await subscribeSeriesPayments(deps.bus, book, deps.logger, () => relay.poke());
      if (tuning.scheduler !== false) {
        rounds = startPeriodic({ name: "schedule charges", intervalMs: settings.sweepIntervalMs, round: () => scheduler.round(), logger: deps.logger });
      }
    },
    async stop() {
      await rounds?.stop();
      await subscription?.stop();
      await relay.stop();
    },
  };
}
