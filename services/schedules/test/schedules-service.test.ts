import { fromBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { DatabaseBus, decodeEnvelope, KafkaBus, type Bus, type Subscription } from "@c402/bus";
import { EVENT_TYPES, paymentsV1, scheduleEventsV1, schedulesV1, TOPICS } from "@c402/contracts";
import { openPostgres, type ServiceDatabase } from "@c402/db";
import { newId } from "@c402/ids";
import { createLogger } from "@c402/logging";
import { ProblemError } from "@c402/problems";
import { createClient, RpcServer, type ServiceClient } from "@c402/rpc";
import { describeWith, eventually, freshPostgresDatabase, infraAvailable } from "@c402/testkit";
import { randomUUID } from "node:crypto";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { ServiceModule } from "@c402/runtime";
import { ChargeScheduler, createSchedulesService, SeriesBook } from "../src";
import { FakePayments } from "./support/fake-payments";
import { heldNonce, paymentSettledMessage, periodSettledEvent, seriesStartedEvent } from "./support/series-fixtures";
import { schedulesStore, type SchedulesDb } from "../src/store/schedules-store";

const { ChargeOutcome } = paymentsV1;
const MINUTE = 60_000;
const RETRY = { baseMs: 30_000, maxMs: 3_600_000 };

/**
 * The schedules service on PostgreSQL and the bus (Kafka when a broker is
 * given, else the database bus): the series' start from payment.settled, the
 * scheduler against a stand-in for payments over gRPC, the cancels and the
 * reads through its gRPC contract. The wall clock is the test's (a test-mode
 * series' clock), so the windows of a compressed day are crossed at will.
 */
describeWith("postgres")("the schedules service", () => {
  let fresh: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let database: ServiceDatabase;
  let bus: Bus;
  let module: ServiceModule;
  let server: RpcServer;
  let client: ServiceClient<typeof schedulesV1.SchedulesService>;
  let payments: FakePayments;
  let subscription: Subscription;
  const published: { type: string; scheduleId: string; payload: Uint8Array }[] = [];
  let now = new Date("2030-01-01T00:00:00Z");
  const wallClock = () => now;

  beforeAll(async () => {
    fresh = await freshPostgresDatabase();
    database = openPostgres({ url: fresh.url, schema: "schedules" });
    const kafka = infraAvailable("kafka");
    bus = kafka
      ? new KafkaBus({ brokers: kafka.split(","), clientId: "schedules-test", groupPrefix: `test-${randomUUID()}.` })
      : await DatabaseBus.open(openPostgres({ url: fresh.url, schema: "bus" }));
    payments = new FakePayments();
    await payments.start();
    module = await createSchedulesService(
      { database, bus, logger: createLogger({ service: "schedules-test", level: "silent" }) },
      payments.client,
      { baseUrl: "https://pay.example", retry: RETRY, sweepIntervalMs: 1_000, chargeLeaseMs: MINUTE },
      { wallClock, scheduler: false },
    );
    server = new RpcServer();
    module.register(server);
    const port = await server.listen("127.0.0.1", 0);
    await module.start();
    server.serving();
    client = createClient(schedulesV1.SchedulesService, `127.0.0.1:${port}`);
    subscription = await bus.subscribe({
      topic: TOPICS.scheduleEvents,
      group: `schedules-test-${randomUUID()}`,
      handler: async (m) => {
        const e = decodeEnvelope(m.value);
        published.push({ type: e.type, scheduleId: e.aggregateId, payload: e.payload });
      },
    });
  }, 90_000);

  afterAll(async () => {
    client?.close();
    await subscription?.stop();
    await server?.stop(1_000);
    await module?.stop();
    await payments?.stop();
    await bus?.close();
    await database?.close();
    await fresh?.drop();
  });

  const db = () => database.db as SchedulesDb;
  const book = () => new SeriesBook(db(), { baseUrl: "https://pay.example", retry: RETRY, wallClock });
  const scheduler = (b = book()) => new ChargeScheduler(b, payments.client, { leaseMs: MINUTE });
  const eventsOf = (scheduleId: string) => published.filter((e) => e.scheduleId === scheduleId).map((e) => e.type);
  const periodOf = async (scheduleId: string, period: number) =>
    (await schedulesStore.periodsOf(db(), [scheduleId])).get(scheduleId)?.find((p) => p.period === period);

  /** Starts a test-mode series through the bus, as payments' period 0 would, and waits for it. */
  async function startSeries(over: Partial<Parameters<typeof seriesStartedEvent>[0]> = {}) {
    const started = seriesStartedEvent({ anchor: now, ...over });
    await bus.publish(TOPICS.paymentSettled, [paymentSettledMessage(started.payment)]);
    await eventually(() => schedulesStore.get(db(), started.scheduleId));
    return started;
  }

  it("starts a series once from its period 0's payment.settled, however often it is delivered", async () => {
    const { scheduleId, payment } = seriesStartedEvent({ anchor: now, periods: 3 });
    const message = paymentSettledMessage(payment);
    // The same event twice, and the same purchase as a second event (another id): one series.
    await bus.publish(TOPICS.paymentSettled, [message, message, paymentSettledMessage(payment)]);
    await eventually(() => eventsOf(scheduleId).length > 0);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(eventsOf(scheduleId)).toEqual([EVENT_TYPES.scheduleStarted]);
    const started = fromBinary(scheduleEventsV1.ScheduleStartedSchema, published.find((e) => e.scheduleId === scheduleId)!.payload);
    expect(started.paymentId).toBe(payment.paymentId);
    expect(started.schedule).toMatchObject({
      id: scheduleId,
      url: `https://pay.example/schedule/${scheduleId}`,
      status: "active",
      periods: 3,
      periodsSettled: 1,
    });
    const { schedule } = await client.getSchedule({ scheduleId });
    expect(schedule?.periodsDetail.map((p) => [p.period, p.status])).toEqual([
      [0, "settled"],
      [1, "scheduled"],
      [2, "scheduled"],
    ]);
    expect(schedule?.periodsDetail[1]?.nonce).toBe(heldNonce(scheduleId, 1));
    expect(timestampDate(schedule!.paidThrough!).getTime()).toBe(now.getTime() + MINUTE);
    expect(timestampDate(schedule!.nextChargeAt!).getTime()).toBe(now.getTime() + MINUTE);

    // Later periods' payment.settled settle them (once each, even twice delivered), the last completes the series.
    const p1 = paymentSettledMessage(periodSettledEvent(payment, 1));
    await bus.publish(TOPICS.paymentSettled, [p1, p1, paymentSettledMessage(periodSettledEvent(payment, 2))]);
    await eventually(() => eventsOf(scheduleId).includes(EVENT_TYPES.scheduleCompleted));
    expect(eventsOf(scheduleId)).toEqual([
      EVENT_TYPES.scheduleStarted,
      EVENT_TYPES.scheduleCharged,
      EVENT_TYPES.scheduleCharged,
      EVENT_TYPES.scheduleCompleted,
    ]);
    expect((await client.getSchedule({ scheduleId })).schedule).toMatchObject({ status: "completed", periodsSettled: 3 });
  }, 60_000);

  it("charges a held period once its window opens by the series' clock, and only then", async () => {
    const { scheduleId } = await startSeries({ periods: 2 });
    await scheduler().sweep(true, now);
    expect(payments.callsOf(scheduleId)).toEqual([]);
    now = new Date(now.getTime() + MINUTE + 1_000);
    await scheduler().round();
    expect(payments.callsOf(scheduleId)).toEqual([{ scheduleId, period: 1 }]);
    expect(await periodOf(scheduleId, 1)).toMatchObject({ status: "settled", payment_id: `pay_${scheduleId}_1`, lease_until: null });
    await eventually(() => eventsOf(scheduleId).includes(EVENT_TYPES.scheduleCompleted));
    expect(eventsOf(scheduleId)).toEqual([EVENT_TYPES.scheduleStarted, EVENT_TYPES.scheduleCharged, EVENT_TYPES.scheduleCompleted]);
    // A late payment.settled of the same period changes nothing.
    expect(await book().settle(db(), scheduleId, 1, `pay_${scheduleId}_1`)).toBe(false);
  });

  it("a read that comes before period 0's payment.settled starts the series from payments' record; the event then starts nothing twice", async () => {
    const { scheduleId, payment } = seriesStartedEvent({ anchor: now, periods: 3 });
    await expect(client.getSchedule({ scheduleId })).rejects.toMatchObject({ slug: "not-found" });
    payments.starts.set(scheduleId, payment);
    const { schedule } = await client.getBuyerView({ scheduleId });
    expect(schedule).toMatchObject({ id: scheduleId, status: "active", periods: 3, periodsSettled: 1 });
    await bus.publish(TOPICS.paymentSettled, [paymentSettledMessage(payment)]);
    await eventually(() => eventsOf(scheduleId).length > 0);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(eventsOf(scheduleId)).toEqual([EVENT_TYPES.scheduleStarted]);
    expect((await client.getSchedule({ scheduleId })).schedule?.periodsDetail.map((p) => p.status)).toEqual(["settled", "scheduled", "scheduled"]);
  });

  it("a retryable charge sends schedule.charge_failed once, backs off on the compressed clock, and settles on a later attempt", async () => {
    const { scheduleId } = await startSeries({ periods: 2 });
    payments.script(
      scheduleId,
      1,
      { outcome: ChargeOutcome.RETRYABLE, reason: "insufficient_funds" },
      { outcome: ChargeOutcome.RETRYABLE, reason: "insufficient_funds" },
      { outcome: ChargeOutcome.SETTLED },
    );
    now = new Date(now.getTime() + MINUTE + 1_000);
    await scheduler().round();
    const first = await periodOf(scheduleId, 1);
    // 30 s on a 60-second day is 21 ms: a second at least.
    expect(first).toMatchObject({ status: "retrying", attempts: 1, last_failure: "insufficient_funds", failure_notified: true });
    expect(first?.next_attempt_at?.getTime()).toBe(now.getTime() + 1_000);
    await scheduler().round();
    expect(payments.callsOf(scheduleId)).toHaveLength(1);
    now = new Date(now.getTime() + 1_000);
    await scheduler().round();
    expect(await periodOf(scheduleId, 1)).toMatchObject({ status: "retrying", attempts: 2 });
    now = new Date(now.getTime() + 1_000);
    await scheduler().round();
    expect(await periodOf(scheduleId, 1)).toMatchObject({ status: "settled" });
    await eventually(() => eventsOf(scheduleId).includes(EVENT_TYPES.scheduleCompleted));
    expect(eventsOf(scheduleId)).toEqual([
      EVENT_TYPES.scheduleStarted,
      EVENT_TYPES.scheduleChargeFailed,
      EVENT_TYPES.scheduleCharged,
      EVENT_TYPES.scheduleCompleted,
    ]);
    const failed = fromBinary(
      scheduleEventsV1.ScheduleChargeFailedSchema,
      published.find((e) => e.scheduleId === scheduleId && e.type === EVENT_TYPES.scheduleChargeFailed)!.payload,
    );
    expect(failed).toMatchObject({ period: 1, reason: "insufficient_funds" });
    expect(timestampDate(failed.windowClosesAt!).getTime()).toBe(first!.valid_before.getTime());
  });

  it("payments unreachable is retried without telling anyone", async () => {
    const { scheduleId } = await startSeries({ periods: 2 });
    now = new Date(now.getTime() + MINUTE + 1_000);
    payments.unavailable = true;
    try {
      await scheduler().round();
    } finally {
      payments.unavailable = false;
    }
    expect(await periodOf(scheduleId, 1)).toMatchObject({ status: "retrying", attempts: 1, last_failure: "payments_unavailable", failure_notified: false });
  });

  it("a window that closes unsettled lapses the period and ends the series", async () => {
    const { scheduleId } = await startSeries({ periods: 3 });
    payments.script(scheduleId, 1, { outcome: ChargeOutcome.RETRYABLE, reason: "insufficient_funds" });
    now = new Date(now.getTime() + MINUTE + 1_000);
    await scheduler().round();
    now = new Date(now.getTime() + MINUTE);
    await scheduler().round();
    const { schedule } = await client.getSchedule({ scheduleId });
    expect(schedule?.status).toBe("lapsed");
    expect(schedule?.endedAt).toBeDefined();
    expect(schedule?.nextChargeAt).toBeUndefined();
    expect(schedule?.periodsDetail.map((p) => p.status)).toEqual(["settled", "lapsed", "cancelled"]);
    await eventually(() => eventsOf(scheduleId).includes(EVENT_TYPES.scheduleLapsed));
    expect(eventsOf(scheduleId)).toEqual([EVENT_TYPES.scheduleStarted, EVENT_TYPES.scheduleChargeFailed, EVENT_TYPES.scheduleLapsed]);
  });

  it("a live period waiting out its backoff lapses as soon as the chain's clock closes its window, not when the backoff ends", async () => {
    const DAY_MS = 86_400_000;
    const { scheduleId } = await startSeries({ periods: 3, testMode: false, daySeconds: 86_400 });
    payments.script(scheduleId, 1, { outcome: ChargeOutcome.RETRYABLE, reason: "insufficient_funds" });
    await scheduler().sweep(false, new Date(now.getTime() + DAY_MS + 1_000));
    const retrying = await periodOf(scheduleId, 1);
    expect(retrying).toMatchObject({ status: "retrying", attempts: 1 });
    expect(retrying?.next_attempt_at?.getTime()).toBe(now.getTime() + RETRY.baseMs);
    // The wall clock stands still (the backoff has not ended); the chain's clock passes the window's close.
    await scheduler().sweep(false, new Date(now.getTime() + 2 * DAY_MS + 1_000));
    expect(payments.callsOf(scheduleId)).toHaveLength(2);
    expect(await periodOf(scheduleId, 1)).toMatchObject({ status: "lapsed", last_failure: "insufficient_funds" });
    expect((await client.getSchedule({ scheduleId })).schedule?.status).toBe("lapsed");
  });

  it("two replicas racing over 20 due periods never ask for one period twice at once, and each settles once", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await startSeries({ periods: 2 })).scheduleId);
    now = new Date(now.getTime() + MINUTE + 1_000);
    payments.delayMs = 30;
    const second = openPostgres({ url: fresh.url, schema: "schedules" });
    try {
      const replicas = [scheduler(book()), scheduler(new SeriesBook(second.db as SchedulesDb, { baseUrl: "https://pay.example", retry: RETRY, wallClock }))];
      // Small batches, many rounds at once on both replicas.
      const rounds = replicas.flatMap((r) => Array.from({ length: 4 }, () => r.sweep(true, now)));
      await Promise.all(rounds);
      while ((await Promise.all(replicas.map((r) => r.sweep(true, now)))).some((n) => n > 0));
    } finally {
      payments.delayMs = 0;
      await second.close();
    }
    expect(payments.overlaps).toEqual([]);
    for (const id of ids) {
      expect(payments.callsOf(id)).toHaveLength(1);
      expect(await periodOf(id, 1)).toMatchObject({ status: "settled" });
    }
    await eventually(() => ids.every((id) => eventsOf(id).includes(EVENT_TYPES.scheduleCompleted)));
    for (const id of ids) expect(eventsOf(id).filter((t) => t === EVENT_TYPES.scheduleCharged)).toHaveLength(1);
  }, 60_000);

  it("a period whose replica died holding its lease is taken again once the lease expired", async () => {
    const { scheduleId } = await startSeries({ periods: 2 });
    now = new Date(now.getTime() + MINUTE + 1_000);
    // A replica claims it, then dies before asking payments.
    const claimed = await schedulesStore.claimDue(db(), { testMode: true, now, wallNow: now, leaseUntil: new Date(now.getTime() + MINUTE), limit: 100 });
    expect(claimed.map((p) => p.schedule_id)).toContain(scheduleId);
    await scheduler().round();
    expect(payments.callsOf(scheduleId)).toEqual([]);
    now = new Date(now.getTime() + MINUTE + 1);
    await scheduler().round();
    expect(payments.callsOf(scheduleId)).toHaveLength(1);
  });

  it("the seller cancels with a reason; a second cancel changes nothing", async () => {
    const { scheduleId, payment } = await startSeries();
    const accountId = payment.series!.accountId;
    await expect(client.cancelSchedule({ accountId: newId("account"), scheduleId, actor: "user:x" })).rejects.toMatchObject({ slug: "not-found" });
    const r = await client.cancelSchedule({ accountId, scheduleId, reason: "discontinued", actor: "user:x" });
    expect(r.alreadyEnded).toBe(false);
    expect(r.schedule).toMatchObject({ status: "cancelled", cancelledBy: "seller", cancelReason: "discontinued" });
    expect(r.schedule?.periodsDetail.map((p) => p.status)).toEqual(["settled", "cancelled", "cancelled"]);
    expect((await client.cancelSchedule({ accountId, scheduleId, actor: "user:x" })).alreadyEnded).toBe(true);
    await eventually(() => eventsOf(scheduleId).includes(EVENT_TYPES.scheduleCancelled));
    const cancelled = fromBinary(
      scheduleEventsV1.ScheduleCancelledSchema,
      published.find((e) => e.scheduleId === scheduleId && e.type === EVENT_TYPES.scheduleCancelled)!.payload,
    );
    expect(cancelled).toMatchObject({ by: "seller", reason: "discontinued", onchain: false });
    // Nothing is charged after a cancel.
    now = new Date(now.getTime() + MINUTE + 1_000);
    await scheduler().round();
    expect(payments.callsOf(scheduleId)).toEqual([]);
  });

  it("the buyer cancels with the payer's signature of cancel_message; another wallet's signature is refused", async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const { scheduleId, payment } = await startSeries({ payer: payer.address, testMode: false });
    const view = await client.getBuyerView({ scheduleId });
    expect(view.cancelMessage).toBe(
      `Cancel c402 series ${scheduleId}\nCheckout: ${payment.checkoutId}\nPayer: ${payer.address}\nNo further period of this series will be charged.`,
    );
    expect(view.cancellable.map((p) => p.period)).toEqual([1, 2]);
    const stranger = privateKeyToAccount(generatePrivateKey());
    await expect(
      client.cancelByBuyer({ scheduleId, method: { case: "signature", value: await stranger.signMessage({ message: view.cancelMessage! }) } }),
    ).rejects.toMatchObject({
      slug: "forbidden",
    });
    // A live series is not cancelled by naming its payer.
    await expect(client.cancelByBuyer({ scheduleId, method: { case: "payer", value: payer.address } })).rejects.toMatchObject({ slug: "forbidden" });
    const r = await client.cancelByBuyer({ scheduleId, method: { case: "signature", value: await payer.signMessage({ message: view.cancelMessage! }) } });
    expect(r).toMatchObject({ alreadyEnded: false, schedule: { status: "cancelled", cancelledBy: "buyer" } });
    expect(r.note).toMatch(/stay valid on chain until their windows end/);
    // Ended: no message to sign; the held authorizations can still be cancelled on chain.
    const after = await client.getBuyerView({ scheduleId });
    expect(after.cancelMessage).toBeUndefined();
    expect(after.cancellable.map((p) => p.period)).toEqual([1, 2]);
  });

  it("the buyer cancels held authorizations on chain through payments; a nonce of no held period is refused by name", async () => {
    const { scheduleId } = await startSeries({ periods: 3 });
    const sig = { v: 27, r: `0x${"01".repeat(32)}`, s: `0x${"02".repeat(32)}` };
    const stray = `0x${"99".repeat(32)}`;
    const refused = client.cancelByBuyer({
      scheduleId,
      method: {
        case: "authorizations",
        value: {
          items: [
            { nonce: heldNonce(scheduleId, 1), ...sig },
            { nonce: stray, ...sig },
          ],
        },
      },
    });
    await expect(refused).rejects.toBeInstanceOf(ProblemError);
    await expect(refused).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [{ field: "authorizations.items[1].nonce", reason: expect.stringContaining(stray) }],
    });
    expect(payments.cancelCalls.filter((c) => c.scheduleId === scheduleId)).toEqual([]);
    const r = await client.cancelByBuyer({
      scheduleId,
      method: { case: "authorizations", value: { items: [1, 2].map((k) => ({ nonce: heldNonce(scheduleId, k), ...sig })) } },
    });
    expect(payments.cancelCalls.filter((c) => c.scheduleId === scheduleId)).toHaveLength(1);
    expect(r.onchain.map((o) => o.status)).toEqual(["cancelled", "cancelled"]);
    expect(r.schedule?.periodsDetail.map((p) => [p.status, p.cancelledOnchain])).toEqual([
      ["settled", false],
      ["cancelled", true],
      ["cancelled", true],
    ]);
    await eventually(() => eventsOf(scheduleId).includes(EVENT_TYPES.scheduleCancelled));
    const cancelled = fromBinary(
      scheduleEventsV1.ScheduleCancelledSchema,
      published.find((e) => e.scheduleId === scheduleId && e.type === EVENT_TYPES.scheduleCancelled)!.payload,
    );
    expect(cancelled).toMatchObject({ by: "buyer", onchain: true });
    expect((await client.getBuyerView({ scheduleId })).cancellable).toEqual([]);
  });

  it("a test-mode series is cancelled by naming its payer, only its payer", async () => {
    const { scheduleId, payment } = await startSeries();
    await expect(client.cancelByBuyer({ scheduleId, method: { case: "payer", value: "0x000000000000000000000000000000000000cafe" } })).rejects.toMatchObject({
      slug: "forbidden",
    });
    const r = await client.cancelByBuyer({ scheduleId, method: { case: "payer", value: payment.payer.toLowerCase() } });
    expect(r).toMatchObject({ alreadyEnded: false, schedule: { status: "cancelled", cancelledBy: "buyer" } });
    expect((await client.cancelByBuyer({ scheduleId, method: { case: "payer", value: payment.payer } })).alreadyEnded).toBe(true);
  });

  it("lists an account's series of one mode newest first, by checkout and status, page by page", async () => {
    const accountId = newId("account");
    const checkoutId = newId("checkout");
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      now = new Date(now.getTime() + 1_000);
      made.push((await startSeries({ accountId, ...(i % 2 === 0 ? { checkoutId } : {}) })).scheduleId);
    }
    made.push((await startSeries({ accountId, testMode: false })).scheduleId);
    await client.cancelSchedule({ accountId, scheduleId: made[4]!, actor: "user:x" });
    const all = await client.listSchedules({ accountId, testMode: true, pageSize: 10 });
    expect(all.schedules.map((s) => s.id)).toEqual(made.slice(0, 5).reverse());
    expect(all.schedules[0]?.periodsDetail).toEqual([]);
    expect((await client.listSchedules({ accountId, testMode: false, pageSize: 10 })).schedules.map((s) => s.id)).toEqual([made[5]]);
    expect((await client.listSchedules({ accountId, testMode: true, pageSize: 10, checkoutId })).schedules.map((s) => s.id)).toEqual([
      made[4],
      made[2],
      made[0],
    ]);
    expect((await client.listSchedules({ accountId, testMode: true, pageSize: 10, status: "cancelled" })).schedules.map((s) => s.id)).toEqual([made[4]]);
    const page1 = await client.listSchedules({ accountId, testMode: true, pageSize: 2 });
    const last = page1.schedules[1]!;
    const page2 = await client.listSchedules({ accountId, testMode: true, pageSize: 2, afterCreatedAt: last.createdAt, afterId: last.id });
    expect([...page1.schedules, ...page2.schedules].map((s) => s.id)).toEqual(made.slice(1, 5).reverse());
  });
});
