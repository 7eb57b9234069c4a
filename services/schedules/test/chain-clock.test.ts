import { startDevchain, type RunningDevchain } from "@c402/devchain";
import { openPostgres, type ServiceDatabase } from "@c402/db";
import { migrate } from "@c402/db";
import { describeWith, freshPostgresDatabase } from "@c402/testkit";
import { createPublicClient, http, toHex } from "viem";
import { ChargeScheduler, jsonRpcChainClock, schedulesMigrations, SeriesBook } from "../src";
import { schedulesStore, type SchedulesDb } from "../src/store/schedules-store";
import { FakePayments } from "./support/fake-payments";
import { seriesStartedEvent } from "./support/series-fixtures";

const DAY = 86_400;

/**
 * A live series is charged by the chain's clock (its latest block time), not
 * the wall clock: on a devchain of its own, a period becomes due only once the
 * chain's time passes its valid_after, however much wall time went by.
 */
describeWith("postgres")("a live series on the chain's clock", () => {
  let devchain: RunningDevchain;
  let fresh: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let database: ServiceDatabase;
  const payments = new FakePayments();

  beforeAll(async () => {
    devchain = await startDevchain({ port: 0 });
    fresh = await freshPostgresDatabase();
    database = openPostgres({ url: fresh.url, schema: "schedules" });
    await migrate(database, schedulesMigrations);
    await payments.start();
  }, 120_000);
  afterAll(async () => {
    await payments.stop();
    await database?.close();
    await fresh?.drop();
    await devchain?.stop();
  });

  it("charges a held period only once the chain's clock passes its valid_after", async () => {
    const chain = createPublicClient({ transport: http(devchain.url) });
    const rpc = (method: string, params: unknown[] = []) => chain.request({ method: method as never, params: params as never });
    const head = async () => Number((await chain.getBlock({ blockTag: "latest" })).timestamp);
    const db = database.db as SchedulesDb;
    const book = new SeriesBook(db, { baseUrl: "https://pay.example", retry: { baseMs: 30_000, maxMs: 3_600_000 } });
    const scheduler = new ChargeScheduler(book, payments.client, { leaseMs: 60_000, chain: jsonRpcChainClock(devchain.network, devchain.url) });

    // Anchored at the chain's time, as payments anchors a live series (period 1 opens a day later).
    const anchor = new Date((await head()) * 1_000);
    const { scheduleId, payment } = seriesStartedEvent({ anchor, testMode: false, daySeconds: DAY, periods: 2 });
    expect(await book.start(db, payment)).toBe(true);

    await scheduler.round();
    expect(payments.callsOf(scheduleId)).toEqual([]);

    // Most of a day on the chain: still not open.
    await rpc("evm_increaseTime", [toHex(DAY - 600)]);
    await rpc("evm_mine");
    await scheduler.round();
    expect(payments.callsOf(scheduleId)).toEqual([]);

    // Past valid_after by the chain's clock (the wall clock barely moved): charged, once.
    await rpc("evm_increaseTime", [toHex(1_200)]);
    await rpc("evm_mine");
    await scheduler.round();
    await scheduler.round();
    expect(payments.callsOf(scheduleId)).toEqual([{ scheduleId, period: 1 }]);
    const periods = (await schedulesStore.periodsOf(db, [scheduleId])).get(scheduleId);
    expect(periods?.map((p) => p.status)).toEqual(["settled", "settled"]);
    expect((await schedulesStore.get(db, scheduleId))?.status).toBe("completed");
  }, 60_000);
});
